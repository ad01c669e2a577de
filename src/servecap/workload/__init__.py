"""servecap.workload."""
