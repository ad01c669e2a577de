"""One scrape of a server's Prometheus `/metrics`, capped in size and time, never raising.

The text is server-supplied data: it is parsed with `prometheus_client`'s text parser (in a
worker thread, so the event loop that times requests is not held up by it), and anything
wrong with it (slow, huge, HTML, malformed, gone) is a `Scrape` with `error` set, counted by
the caller; a scrape never fails a run.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from servecap.core.clock import now_ns
from servecap.core.server_series import SERIES_TABLE, canonical_values

MAX_BYTES = 4 * 1024 * 1024  # a vLLM exposition is ~100 KB; more is not metrics
TIMEOUT_S = 2.0
READ_CHUNK = 64 * 1024

ScrapeError = str  # "timeout", "too_large", "http_503", "not_metrics", "malformed", ...


@dataclass(slots=True)
class Scrape:
    """What one scrape saw, stamped on the run's `perf_counter_ns` clock (its midpoint)."""

    t_ns: int
    duration_ms: float
    error: ScrapeError | None = None
    detail: str = ""
    samples: dict[str, float] = field(default_factory=dict)  # "name{labels}" -> value
    series: dict[str, float] = field(default_factory=dict)  # canonical -> value
    full: bool = True  # samples hold every raw sample, not only the mapped ones

    @property
    def ok(self) -> bool:
        return self.error is None


def sample_key(name: str, labels: dict[str, str]) -> str:
    """`name{a="x",b="y"}` with labels sorted, so one series keeps one key across scrapes."""
    if not labels:
        return name
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


def mapped_lines(text: str) -> str:
    """Only the sample lines of mapped names: the parser's cost is per line, and a real
    engine's exposition is mostly histogram buckets no canonical series reads."""
    keep = [
        line for line in text.splitlines()
        if line and line[0] != "#" and line.split("{", 1)[0].split(" ", 1)[0] in SERIES_TABLE
    ]
    return "\n".join(keep) + "\n"


def parse_exposition(text: str, full: bool = True) -> tuple[dict[str, float], dict[str, float]]:
    """(raw samples, canonical series) of a text exposition; ValueError if it is not one.

    `full=False` parses only the mapped names' lines (their raw samples and the series);
    an exposition with none of them is then no error, just empty."""
    if not full:
        text = mapped_lines(text)
        if text == "\n":
            return {}, {}
    samples: dict[str, float] = {}
    pairs: list[tuple[str, float]] = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            value = float(sample.value)
            pairs.append((sample.name, value))
            if math.isfinite(value):
                samples[sample_key(sample.name, dict(sample.labels))] = value
    if not samples:
        raise ValueError("no samples")
    return samples, canonical_values(pairs)


async def _read_capped(response: aiohttp.ClientResponse, limit: int) -> bytes | None:
    body = bytearray()
    async for chunk in response.content.iter_chunked(READ_CHUNK):
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


async def _fetch(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str], limit: int
) -> tuple[ScrapeError | None, str]:
    """(error, body text): the body only when the answer looks like an exposition."""
    async with session.get(url, headers=headers, allow_redirects=False) as response:
        if response.status != 200:
            return f"http_{response.status}", ""
        ctype = response.headers.get("Content-Type", "").lower()
        if "html" in ctype or "json" in ctype:
            return "not_metrics", ctype[:60]
        body = await _read_capped(response, limit)
        if body is None:
            return "too_large", f"over {limit} bytes"
        return None, body.decode("utf-8", errors="replace")


async def scrape_once(
    session: aiohttp.ClientSession,
    url: str,
    headers: dict[str, str] | None = None,
    timeout_s: float = TIMEOUT_S,
    max_bytes: int = MAX_BYTES,
    full: bool = True,
) -> Scrape:
    """Fetch and parse `url` once; every failure is a Scrape with `error`, never raised.

    `full`: keep every raw sample; otherwise only the mapped ones (see `mapped_lines`)."""
    start = now_ns()
    error: ScrapeError | None
    try:
        async with asyncio.timeout(timeout_s):
            error, text = await _fetch(session, url, headers or {}, max_bytes)
    except TimeoutError:
        error, text = "timeout", f"no answer in {timeout_s:g} s"
    except (aiohttp.ClientError, OSError) as exc:
        error, text = "unreachable", type(exc).__name__
    end = now_ns()
    scrape = Scrape(t_ns=(start + end) // 2, duration_ms=(end - start) / 1e6, full=full)
    if error is not None:
        scrape.error, scrape.detail = error, text
        return scrape
    if text.lstrip().startswith("<"):
        scrape.error, scrape.detail = "not_metrics", "HTML"
        return scrape
    try:
        scrape.samples, scrape.series = await asyncio.to_thread(parse_exposition, text, full)
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        # the parser's message quotes the body (server text, may echo anything): not kept
        scrape.error, scrape.detail = "malformed", type(exc).__name__
    return scrape
