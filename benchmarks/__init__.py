"""Benchmarks: this runtime side by side with the upstream kube-scheduler (`make bench`)."""
