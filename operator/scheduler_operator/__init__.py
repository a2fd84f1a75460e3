"""The SchedulerProfile operator: runs additional kube-schedulers as custom resources."""
