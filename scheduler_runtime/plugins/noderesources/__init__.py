"""NodeResourcesFit and NodeResourcesBalancedAllocation (upstream's noderesources folder)."""

from scheduler_runtime.plugins.noderesources.balanced_allocation import BalancedAllocation
from scheduler_runtime.plugins.noderesources.fit import Fit

NodeResourcesFit = Fit
NodeResourcesBalancedAllocation = BalancedAllocation

__all__ = ["BalancedAllocation", "Fit", "NodeResourcesBalancedAllocation", "NodeResourcesFit"]
