"""L2: load schedulers. `Backend` is defined here, the consumer; the client meets it."""
