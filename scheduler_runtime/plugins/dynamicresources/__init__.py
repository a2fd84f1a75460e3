"""DynamicResources: Dynamic Resource Allocation as kube-scheduler 1.36 does it. The plugin
is in `dynamicresources.py`; the structured allocator, the CEL environment and the object
model it runs on are beside it."""

from __future__ import annotations

from scheduler_runtime.plugins.dynamicresources.dynamicresources import DynamicResources

__all__ = ["DynamicResources"]
