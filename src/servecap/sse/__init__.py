"""L1: a sans-I/O decoder for server-sent events."""
