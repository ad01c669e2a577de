"""L1: pure statistics: percentiles with the right tail, SLO checks, capacity by Little's law."""
