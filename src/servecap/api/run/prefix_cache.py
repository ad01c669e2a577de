"""The prefix cache around each level: its reset before the level, and the hit rate the
workload was built for (`--reset-prefix-cache`, `--prefix-hit-rate`).

`prefix_setup` decides once per run, after preflight detected the engine, where the reset
goes (`client.cache_reset.reset_target`) and what hit rate the prompts were built for
(`workload.prefix_cache.hit_rate_split`); `describe()` is what run.json keeps of it. The
`PrefixCacheObserver` (registered in `observers.py`) posts the reset as it enters a level,
before the level's first request, and adds the level's fields: `prefix_cache_reset` (done,
failed: why, or skipped: why) and the target and ideal hit rates. A failed reset is the
level's warning (`metrics.prefix_hits`), never a failed level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from servecap.api.run.run_config import RunConfig
from servecap.client.cache_reset import ResetTarget, reset_prefix_cache, reset_target
from servecap.core.config import ClientOptions
from servecap.core.urls import public_url
from servecap.workload.prefix_cache import HitRateSplit, hit_rate_split


@dataclass(frozen=True)
class PrefixCacheSetup:
    """What a run does about the prefix cache at each level (None when it does nothing)."""

    reset: ResetTarget
    asked: str  # the setting as given: auto, off or a URL
    options: ClientOptions
    headers: dict[str, str] = field(repr=False)  # may hold the API key: memory only
    split: HitRateSplit | None = None
    pool: int = 1

    def describe(self) -> dict[str, Any]:
        """run.json's `prefix_cache`: the reset asked for and done, the built hit rate."""
        out: dict[str, Any] = {"reset": public_url(self.asked), "reset_done": self.reset.note}
        if self.split is not None:
            out.update(hit_rate_target=self.split.target, hit_rate_ideal=self.split.ideal,
                       prefix_tokens=self.split.prefix_tokens,
                       suffix_tokens=self.split.suffix_tokens, prefix_pool=self.pool)
        return out


def prefix_setup(
    config: RunConfig, server: dict[str, Any], headers: dict[str, str]
) -> PrefixCacheSetup | None:
    """The run's prefix-cache setup from its config and the server preflight described."""
    spec = config.workload
    rate = spec.prefix_hit_rate if spec is not None else None
    if config.reset_prefix_cache == "off" and rate is None:
        return None
    engine = server.get("engine")
    name = engine.get("name") if isinstance(engine, dict) else None
    reset = reset_target(config.reset_prefix_cache, config.client.base_url,
                         name if isinstance(name, str) else None)
    split = hit_rate_split(rate, config.input_tokens) if rate is not None else None
    pool = spec.prefix_groups if spec is not None else 1
    return PrefixCacheSetup(reset, config.reset_prefix_cache, config.client, headers,
                            split, pool)


class PrefixCacheObserver:
    """Resets the cache as a level starts; adds the level's prefix-cache fields."""

    def __init__(self, setup: PrefixCacheSetup | None) -> None:
        self._setup = setup
        self._reset: str | None = None

    async def __aenter__(self) -> PrefixCacheObserver:
        setup = self._setup
        if setup is not None and setup.reset.url is not None:
            self._reset = await reset_prefix_cache(setup.reset.url, setup.options,
                                                   setup.headers)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    def fields(self) -> dict[str, Any]:
        setup = self._setup
        if setup is None:
            return {}
        out: dict[str, Any] = {}
        if self._reset is not None:
            out["prefix_cache_reset"] = self._reset
        elif setup.asked != "off":  # auto found no endpoint: said at every level it concerns
            out["prefix_cache_reset"] = f"skipped: {setup.reset.note}"
        if setup.split is not None:
            out["prefix_hit_target"] = setup.split.target
            out["prefix_hit_ideal"] = setup.split.ideal
        return out
