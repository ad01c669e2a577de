"""Configuration models: what a run was asked to do, and the SLOs a plan judges it by.

Secrets never live here: the API key is referenced by the name of its environment variable,
and extra headers keep only their names once stored (see `RunConfig.stored`).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from servecap.core.errors import UserInputError
from servecap.core.load_spec import ClosedLoad, LoadSpec
from servecap.core.urls import hide_userinfo, strip_credentials
from servecap.core.workload_spec import WorkloadSpec

Endpoint = Literal["chat", "completions"]
Statistic = Literal["p90", "mean"]

DEFAULT_LEVELS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)


def v1_hint(base_url: str, status: int) -> str:
    """A hint for a `/models` that answered 404 at a base URL without the usual `/v1`."""
    path = urlsplit(base_url).path.rstrip("/")
    if status != 404 or path.endswith("/v1"):
        return ""
    return f" (did you mean {strip_credentials(base_url.rstrip('/'))}/v1?)"


def validate_base_url(url: str) -> str:
    """An http(s) URL with a host, normalised without a trailing slash."""
    shown = hide_userinfo(url)  # never any part of user:password, however the URL fails
    try:
        parts = urlsplit(url.strip())
        _ = parts.port
    except ValueError as exc:
        raise UserInputError(f"invalid host or port in --base-url {shown!r}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserInputError(
            f"invalid --base-url {shown!r}: expected http(s)://host[:port]/v1"
        )
    return url.strip().rstrip("/")


def parse_levels(text: str, flag: str = "--concurrency") -> list[int]:
    """Concurrency levels from `1,2,4`: positive, de-duplicated, sorted.

    An empty item (`1,,2`, `1,2,`) is refused rather than skipped: it is most likely a level
    the user meant to type. `flag` names the option in messages (`--users` takes the same)."""
    what = "concurrency" if flag == "--concurrency" else flag
    items = [part.strip() for part in text.split(",")]
    if not any(items):
        raise UserInputError(f"{flag} needs at least one level, e.g. 1,2,4,8")
    if not all(items):
        raise UserInputError(
            f"invalid {flag} {text.strip()[:80]!r}: an empty level between commas"
        )
    levels: list[int] = []
    for item in items:
        if not item.isdigit() or int(item) < 1:
            raise UserInputError(f"invalid {what} level {item!r}: levels are integers >= 1")
        levels.append(int(item))
    if max(levels) > 100_000:
        raise UserInputError(f"{what} levels above 100000 are not supported")
    return sorted(set(levels))


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


class RunConfig(BaseModel):
    """Everything `servecap run` was asked to do. Stored in `run.json` (secret-free)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    model: str | None = None
    endpoint: Endpoint = "chat"
    concurrency: list[int] = Field(default_factory=lambda: list(DEFAULT_LEVELS))
    rounds: int = Field(default=10, ge=1, le=1_000_000)
    input_tokens: int = Field(default=128, ge=1, le=10_000_000)
    output_tokens: int = Field(default=128, ge=1, le=10_000_000)
    warmup: int = Field(default=1, ge=0, le=10_000)
    seed: int = 0
    out_dir: str = "results"
    extra_body: dict[str, object] = Field(default_factory=dict)
    client: ClientOptions = Field(default_factory=ClientOptions)
    notes: str | None = None
    # The load plan when it is not the closed sweep of `concurrency` x `rounds` above (the
    # CLI's flags build that one); absent from stored configs when unset.
    load: LoadSpec | None = None
    # What to send when it is not the built-in prompts (datasets, length distributions,
    # shared prefixes); absent from stored configs when unset.
    workload: WorkloadSpec | None = None
    # the server's /metrics: "auto" (its host's /metrics, off if absent), "off", or a URL
    server_metrics: str = "auto"
    metrics_hz: float = Field(default=1.0, gt=0, le=10)
    # Worker processes a level is split over (`--workers`; None: auto, one process while
    # one core keeps up) and a Ray cluster to run them on (`--ray`); absent when unset.
    workers: int | None = Field(default=None, ge=1, le=1024)
    ray_address: str | None = None
    # `--find-cmax`: after the closed grid, bisect C_max on the integers (absent when off)
    find_cmax: FindCmax | None = None

    @field_validator("server_metrics")
    @classmethod
    def _check_metrics(cls, value: str) -> str:
        value = value.strip()
        if value in ("auto", "off"):
            return value
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected auto, off or an http(s) URL of /metrics")
        return strip_credentials(value)

    @field_validator("concurrency")
    @classmethod
    def _check_levels(cls, value: list[int]) -> list[int]:
        if not value or any(level < 1 for level in value):
            raise ValueError("concurrency levels must be a non-empty list of integers >= 1")
        return sorted(set(value))

    @model_validator(mode="after")
    def _cmax_needs_a_grid(self) -> RunConfig:
        if self.find_cmax is not None and self.load is not None and self.load.kind != "closed":
            raise ValueError(f"find_cmax refines a concurrency grid, not a {self.load.kind} load")
        return self

    def load_spec(self) -> LoadSpec:
        """The plan this run sweeps: `load`, else the closed loop over `concurrency`."""
        if self.load is not None:
            return self.load
        return ClosedLoad(concurrency=self.concurrency, rounds=self.rounds)

    def stored(self) -> dict[str, object]:
        """The config as written to disk: credentials stripped from the URL."""
        optional = ("load", "workload", "workers", "ray_address")
        unset = {name for name in optional if getattr(self, name) is None}
        unset = {
            name for name in ("load", "workload", "find_cmax") if getattr(self, name) is None
        }
        data = self.model_dump(mode="json", exclude=unset or None)
        client = data["client"]
        assert isinstance(client, dict)
        client["base_url"] = strip_credentials(self.client.base_url)
        return data


class SLO(BaseModel):
    """Service-level objectives a plan judges levels by (the seed's defaults)."""

    model_config = ConfigDict(extra="forbid")

    ttft_ms: float = Field(default=1000.0, gt=0)
    tps: float = Field(default=15.0, ge=0)
    statistic: Statistic = "p90"
    think_time_s: float = Field(default=45.0, ge=0)


class FindCmax(BaseModel):
    """`servecap run --find-cmax`: the SLOs C_max is judged by and the extra levels allowed."""

    model_config = ConfigDict(extra="forbid")

    slo: SLO = Field(default_factory=lambda: SLO())
    budget: int = Field(default=8, ge=1, le=64)
