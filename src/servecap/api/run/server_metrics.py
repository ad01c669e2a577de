"""Scrape the server's `/metrics` during a run, and give each level the server's view of it.

One `RunScraper` per run polls at `--metrics-hz` on its own connection (never one of the
request pool's), writes every scrape to `server_metrics.jsonl` and keeps the canonical
series in memory. `ServerMetricsObserver` is the per-level observer: it takes one scrape as
the level starts and one as it ends (so counters cover exactly the level, however short),
and its fields are `metrics.server_view.server_fields` over the scrapes between.

The observer factory in `api.run.observers` only gets the level, so the run's scraper is found
through a context variable that `run_benchmark_async` sets for the run's task: a run without
one (scraping off, or the sweep run outside `run_benchmark_async`) gets a silent observer.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from servecap.client.http import ssl_context
from servecap.client.metrics_scrape import Scrape, scrape_once
from servecap.core.clock import now_ns
from servecap.core.config import ClientOptions
from servecap.core.secrets import Secrets
from servecap.core.urls import public_url
from servecap.metrics.server_view import Point, server_fields
from servecap.storage.server_metrics_file import SERVER_METRICS_FILE, Redact, ScrapeWriter

DOWN_AFTER = 3  # failed scrapes in a row: skip the boundary scrapes until one works again
FULL_EVERY_S = 10.0  # every raw sample this often and at level edges; mapped ones each scrape


def metrics_url(mode: str, base_url: str) -> str | None:
    """The URL to scrape: `/metrics` on the base URL's host for auto, None for off."""
    if mode == "off":
        return None
    if mode != "auto":
        return mode
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, "/metrics", "", ""))


def _same_origin(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.scheme, pa.hostname, pa.port) == (pb.scheme, pb.hostname, pb.port)


class RunScraper:
    """Polls one `/metrics` URL for the whole run; its `status` goes into run.json."""

    FILE = SERVER_METRICS_FILE  # where its scrapes go (a power scraper has its own)

    def __init__(
        self, url: str, hz: float, mode: str, headers: dict[str, str], redact: Redact
    ) -> None:
        self.url, self.period_s, self.headers, self._redact = url, 1.0 / hz, headers, redact
        self.points: list[Point] = []
        self.errors: list[tuple[int, str]] = []
        shown = public_url(url)
        self.status: dict[str, Any] = {"mode": mode, "url": shown, "hz": hz, "state": "on"}
        self._failing = 0
        self._lock = asyncio.Lock()
        self._session: aiohttp.ClientSession | None = None
        self._writer: ScrapeWriter | None = None
        self._task: asyncio.Task[None] | None = None
        self._last_full = -FULL_EVERY_S

    async def start(self, options: ClientOptions, run_dir: Path) -> Scrape:
        connector = aiohttp.TCPConnector(limit=2, ssl=ssl_context(options))
        self._session = aiohttp.ClientSession(connector=connector, trust_env=False)
        self._writer = ScrapeWriter(run_dir / self.FILE, self._redact)
        first = await self.scrape()
        return first

    def poll(self) -> None:
        self._task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            due += self.period_s
            await asyncio.sleep(max(0.0, due - loop.time()))
            await self.scrape(full=loop.time() - self._last_full >= FULL_EVERY_S)
            due = max(due, loop.time() - self.period_s)  # a slow scrape skips, never bursts

    async def scrape(self, full: bool = True) -> Scrape:
        assert self._session is not None and self._writer is not None
        if full:
            self._last_full = asyncio.get_running_loop().time()
        async with self._lock:
            result = await scrape_once(self._session, self.url, self.headers, full=full)
        self._record(result)
        return result

    def _record(self, result: Scrape) -> None:
        assert self._writer is not None
        self._writer.write(
            result.t_ns, result.duration_ms, result.series, result.samples,
            result.error, result.detail, result.full,
        )
        if result.ok:
            self._failing = 0
            self.points.append((result.t_ns, result.series))
        else:
            self._failing += 1
            self.errors.append((result.t_ns, result.error or "error"))
        self.status["scrapes"] = len(self.points) + len(self.errors)
        self.status["errors"] = dict(Counter(kind for _, kind in self.errors))

    async def boundary(self) -> None:
        """A scrape at a level's edge, unless the endpoint keeps failing (no slower run)."""
        if self._failing < DOWN_AFTER:
            await self.scrape()

    def window(self, t0: int, t1: int) -> tuple[list[Point], int]:
        points = [p for p in self.points if t0 <= p[0] <= t1]
        return points, sum(1 for t, _ in self.errors if t0 <= t <= t1)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
        if self._writer is not None:
            self._writer.close()


async def start_scraper(
    mode: str, hz: float, options: ClientOptions, secrets: Secrets, run_dir: Path
) -> tuple[RunScraper | None, dict[str, Any]]:
    """The run's scraper (None when off), and the status for run.json.

    auto: one probe first; a server without `/metrics` turns it off, and the run says why.
    An explicit URL is kept even when failing: its errors are counted."""
    url = metrics_url(mode, options.base_url)
    if url is None:
        return None, {"mode": "off", "state": "off"}
    # credentials only travel to the server they belong to
    sent = secrets.http_headers() if _same_origin(url, options.base_url) else {}
    scraper = RunScraper(url, hz, "url" if mode != "auto" else "auto", sent, secrets.redact)
    first = await scraper.start(options, run_dir)
    if mode == "auto" and not first.ok:
        await scraper.close()
        (run_dir / SERVER_METRICS_FILE).unlink(missing_ok=True)
        shown = public_url(url)
        reason = f"no usable {shown} ({first.error}): server metrics off"
        return None, {"mode": "auto", "url": shown, "state": "off", "reason": reason}
    scraper.poll()
    return scraper, scraper.status


class ServerMetricsObserver:
    """Per-level observer: the server's view over the level's window (`server_*` fields)."""

    def __init__(self, scraper: RunScraper | None) -> None:
        self._scraper = scraper
        self._t0 = 0
        self._fields: dict[str, Any] = {}

    async def __aenter__(self) -> ServerMetricsObserver:
        if self._scraper is not None:
            await self._scraper.boundary()
            self._t0 = now_ns()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        scraper = self._scraper
        if scraper is None:
            return
        t1 = now_ns()
        # the closing scrape counts for the level: it is what the level left behind
        await asyncio.shield(scraper.boundary())
        points, errors = scraper.window(self._t0 - int(scraper.period_s * 1e9), now_ns())
        inside = [p for p in points if self._t0 <= p[0] <= t1]
        self._fields = server_fields(_trim(points, self._t0, t1), errors, inside)

    def fields(self) -> dict[str, Any]:
        return dict(self._fields)


def _trim(points: list[Point], t0: int, t1: int) -> list[Point]:
    """The scrapes inside [t0, t1], plus the last one before t0 and the first after t1, so
    counter differences span the whole level."""
    before = [p for p in points if p[0] < t0][-1:]
    inside = [p for p in points if t0 <= p[0] <= t1]
    after = [p for p in points if p[0] > t1][:1]
    return before + inside + after

