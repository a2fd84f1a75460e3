"""The live scheduler: informers, cache, queue, leader election and the API writes of one
`scheduler-runtime run` process."""
