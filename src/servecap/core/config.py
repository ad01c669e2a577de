"""Configuration models shared by every layer: the client's options, the SLOs a plan
judges a run by, and the checks of a base URL and of concurrency levels.

Secrets never live here: the API key is referenced by the name of its environment variable.
What a whole run was asked to do (`RunConfig`, with its load plan) is `api.run.run_config`'s,
since the load plan's kinds sit above this layer.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from servecap.core.errors import SettingError, bad_setting
from servecap.core.urls import hide_userinfo, public_url

Endpoint = Literal["chat", "completions"]
Statistic = Literal["p90", "mean"]

DEFAULT_LEVELS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)


def v1_hint(base_url: str, status: int) -> str:
    """A hint for a `/models` that answered 404 at a base URL without the usual `/v1`."""
    path = urlsplit(base_url).path.rstrip("/")
    if status != 404 or path.endswith("/v1"):
        return ""
    return f" (did you mean {public_url(base_url.rstrip('/'))}/v1?)"


def validate_base_url(url: str) -> str:
    """An http(s) URL with a host, normalised without a trailing slash."""
    shown = hide_userinfo(url)  # never any part of user:password, however the URL fails
    try:
        parts = urlsplit(url.strip())
        _ = parts.port
    except ValueError as exc:
        raise SettingError(f"invalid host or port in {{base_url}} {shown!r}",
                           "base_url") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise bad_setting("base_url", f"{shown!r}: expected http(s)://host[:port]/v1",
                          "invalid ")
    return url.strip().rstrip("/")


def parse_levels(text: str, setting: str = "concurrency") -> list[int]:
    """Concurrency levels from `1,2,4`: positive, de-duplicated, sorted.

    An empty item (`1,,2`, `1,2,`) is refused rather than skipped: it is most likely a level
    the user meant to type. `setting` is named in messages (`users` takes the same)."""
    items = [part.strip() for part in text.split(",")]
    if not any(items):
        raise bad_setting(setting, "needs at least one level, e.g. 1,2,4,8")
    if not all(items):
        raise bad_setting(setting, f"{text.strip()[:80]!r}: an empty level between commas",
                          "invalid ")
    levels: list[int] = []
    for item in items:
        if not item.isdigit() or int(item) < 1:
            raise bad_setting(setting, f"level {item!r}: levels are integers >= 1", "invalid ")
        levels.append(int(item))
    if max(levels) > 100_000:
        raise bad_setting(setting, "levels above 100000 are not supported")
    return sorted(set(levels))


# Headers the HTTP client writes itself (framing, routing, connection management).
CLIENT_OWNED_HEADERS = frozenset({
    "content-length", "transfer-encoding", "host", "connection", "keep-alive", "upgrade",
    "te", "trailer", "expect", "proxy-connection",
})


class ClientOptions(BaseModel):
    """How the client talks to the server; shared by runs and preflight."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = "http://127.0.0.1:8000/v1"
    api_key_env: str = "OPENAI_API_KEY"
    header_names: list[str] = Field(default_factory=list)
    insecure: bool = False
    ca_bundle: str | None = None
    timeout_s: float = Field(default=600.0, gt=0)
    connect_timeout_s: float = Field(default=10.0, gt=0)
    stall_timeout_s: float = Field(default=60.0, gt=0)

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        return validate_base_url(value)

    @field_validator("header_names")
    @classmethod
    def _no_framing(cls, names: list[str]) -> list[str]:
        """A header that frames or routes the request is the client's own: a second
        `Content-Length` or a `Transfer-Encoding` makes the server wait for a body that never
        comes (a hang, then a misleading HTTP 408)."""
        for name in names:
            if name.lower() in CLIENT_OWNED_HEADERS:
                raise ValueError(f"{name} is set by servecap for every request; drop it")
        return names


class SLO(BaseModel):
    """Service-level objectives a plan judges levels by (the seed's defaults)."""

    # NaN passes no bound, but Infinity passes `ge=0`: an infinite think time is no SLO
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    ttft_ms: float = Field(default=1000.0, gt=0)
    tps: float = Field(default=15.0, ge=0)
    statistic: Statistic = "p90"
    think_time_s: float = Field(default=45.0, ge=0)
    # an agents level's whole task (`kinds.agents_verdict`); levels of other kinds ignore it
    task_time_s: float = Field(default=60.0, gt=0)


def on_clock(slo: SLO, time_scale: float | None) -> SLO:
    """`slo` on the clock of a server that runs `time_scale` times faster than real time
    (a simulator's `--time-scale`): TTFT / S, TPS x S, think and task time / S, so a level
    measured on its clock is judged as the real-time server would be."""
    if not time_scale or time_scale == 1:
        return slo
    return slo.model_copy(update={
        "ttft_ms": slo.ttft_ms / time_scale, "tps": slo.tps * time_scale,
        "think_time_s": slo.think_time_s / time_scale,
        "task_time_s": slo.task_time_s / time_scale,
    })


class FindCmax(BaseModel):
    """`servecap run --find-cmax`: the SLOs C_max is judged by and the extra levels allowed."""

    model_config = ConfigDict(extra="forbid")

    slo: SLO = Field(default_factory=lambda: SLO())
    budget: int = Field(default=8, ge=1, le=64)
