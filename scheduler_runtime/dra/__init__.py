"""Dynamic Resource Allocation as a library, in the place k8s.io/dynamic-resource-allocation has
upstream: the CEL environment for device selectors (`cel`, `celast`), the object model of
slices, classes and claims (`model`) and the structured allocator (`allocator`). The
DynamicResources plugin calls it; it knows nothing of plugins or of the scheduler's loop."""
