"""A kube-scheduler-compatible scheduler runtime in Python."""
