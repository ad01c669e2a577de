"""The load kinds: each module owns everything its kind means (`kinds.base` says what a kind
answers; `kinds.registry` lists them). Between `workload`/`stats` and `load`/`metrics`: the
kinds' schedulers and rules need only the layers below, and everything above asks them."""
