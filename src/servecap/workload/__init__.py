"""L1: the prompts a run sends."""
