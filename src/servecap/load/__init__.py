"""L2: running levels: the sweep with its observers, worker processes and Ray actors, the
event loop. Each level runs its own kind's scheduler (`servecap.kinds`)."""
