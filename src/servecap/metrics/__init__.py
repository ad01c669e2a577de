"""L2: per-request metrics and per-level summaries, exactly as DESIGN.md defines them."""
