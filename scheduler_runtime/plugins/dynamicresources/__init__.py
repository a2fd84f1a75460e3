"""DynamicResources: Dynamic Resource Allocation as kube-scheduler does it. The plugin is in
`dynamicresources.py`; the structured allocator, the CEL environment and the object model it
runs on are the library `scheduler_runtime.dra`."""

from __future__ import annotations

from scheduler_runtime.plugins.dynamicresources.dynamicresources import DynamicResources

__all__ = ["DynamicResources"]
