"""The scheduling framework: extension points, the per-profile runner and the algorithm."""
