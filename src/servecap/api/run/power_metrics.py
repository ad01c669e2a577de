"""`--power-metrics URL`: scrape a DCGM exporter during a run, each level's energy from it.

The run's `/metrics` scraper (`api.run.server_metrics.RunScraper`), pointed at the exporter:
its own connection, its own file (`power_metrics.jsonl`), a scrape at each level's edges and
`--metrics-hz` between. Every scrape keeps the raw samples (the DCGM names are not among the
canonical server series). A failing exporter is counted in run.json's `power_metrics` and
named in the level's `energy.note`; its boundary scrapes stop after a few failures in a row,
so it never fails nor slows the run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servecap.api.run.server_metrics import RunScraper
from servecap.client.metrics_scrape import Scrape
from servecap.core.clock import now_ns
from servecap.core.config import ClientOptions
from servecap.core.secrets import Secrets
from servecap.core.urls import public_url
from servecap.metrics.energy import POWER_WINDOW, Reading, reading

POWER_METRICS_FILE = "power_metrics.jsonl"


class PowerScraper(RunScraper):
    """A `RunScraper` for a DCGM exporter: every scrape full, its (t, W, J) kept."""

    FILE = POWER_METRICS_FILE

    def __init__(self, url: str, hz: float, redact: Any) -> None:
        super().__init__(url, hz, "url", {}, redact)  # never the server's credentials
        self.readings: list[Reading] = []
        self.gpus = 0

    async def scrape(self, full: bool = True) -> Scrape:
        result = await super().scrape(True)
        if result.ok:
            point, gpus = reading(result.t_ns, result.samples)
            self.readings.append(point)
            self.gpus = max(self.gpus, gpus)
        return result

    def between(self, t0: int, t1: int) -> dict[str, Any]:
        """The readings and errors of [t0, t1], as a level's observer hands them on."""
        return {
            "points": [list(p) for p in self.readings if t0 <= p[0] <= t1],
            "errors": [[t, kind] for t, kind in self.errors if t0 <= t <= t1],
            "gpus": self.gpus or None,
        }


async def start_power_scraper(
    url: str | None, hz: float, options: ClientOptions, secrets: Secrets, run_dir: Path
) -> tuple[PowerScraper | None, dict[str, Any]]:
    """The run's power scraper (None without `--power-metrics`) and run.json's status; an
    exporter failing from the start is kept and counted, never an error of the run."""
    if url is None:
        return None, {}
    scraper = PowerScraper(url, hz, secrets.redact)
    await scraper.start(options, run_dir)
    scraper.poll()
    scraper.status["url"] = public_url(url)
    return scraper, scraper.status


class PowerObserver:
    """Per-level observer: the exporter's readings from the level's start to its end."""

    def __init__(self, scraper: PowerScraper | None) -> None:
        self._scraper = scraper
        self._t0 = 0
        self._fields: dict[str, Any] = {}

    async def __aenter__(self) -> PowerObserver:
        if self._scraper is not None:
            self._t0 = now_ns()
            await self._scraper.boundary()  # a reading before the level's first token
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._scraper is None:
            return
        await self._scraper.boundary()  # and one after its last
        self._fields = {POWER_WINDOW: self._scraper.between(self._t0, now_ns())}

    def fields(self) -> dict[str, Any]:
        return dict(self._fields)


class Closers:
    """The run's scrapers closed as one at its end."""

    def __init__(self, *scrapers: RunScraper | None) -> None:
        self._scrapers = [s for s in scrapers if s is not None]

    async def close(self) -> None:
        for scraper in self._scrapers:
            await scraper.close()
