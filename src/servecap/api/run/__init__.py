"""Running a load against a server: the run request, workload, workers and progress."""
