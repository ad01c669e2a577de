"""The simulator's /metrics as a test reads it."""

from __future__ import annotations

import urllib.request

from servecap.client.metrics_scrape import parse_exposition


def sim_metrics(base_url: str) -> dict[str, float]:
    """Every sample of the simulator's /metrics by name, its one model label dropped
    (counters end in `_total`); parsed as a run's scrapes are."""
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/metrics", timeout=10) as r:
        samples, _ = parse_exposition(r.read().decode())
    return {key.split("{", 1)[0]: value for key, value in samples.items()}
