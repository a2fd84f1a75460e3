"""The scheduling framework, the runtime's ground floor: extension points and plugin base
(interface.py), the plugin registry, the per-profile runner (runtime.py), the columnar
snapshot, the algorithm and the explanations that `run` and `simulate` share."""
