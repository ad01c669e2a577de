"""`RunConfig`: everything a run was asked to do, stored in `run.json` (secret-free).

It lives above the load kinds, whose models its `load` field is the union of
(`kinds.registry.LoadSpec`). Secrets never live here: the API key is referenced by the name
of its environment variable, and extra headers keep only their names once stored (`stored`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from servecap.api.run.outage import DEFAULT_OUTAGE_S
from servecap.core.config import DEFAULT_LEVELS, ClientOptions, Endpoint, FindCmax
from servecap.core.cost import CostFields
from servecap.core.urls import public_url, strip_credentials
from servecap.core.workload_spec import WorkloadSpec
from servecap.kinds.closed import ClosedLoad
from servecap.kinds.registry import LoadSpec


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
    out_dir: str = Field(default="results", min_length=1)  # "": no silent current dir
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
    # stop the run once failures alone have ended for this long (a server gone for good)
    outage_s: float = Field(default=DEFAULT_OUTAGE_S, gt=0, le=86_400)
    ray_address: str | None = None
    # `--find-cmax`: after the closed grid, bisect C_max on the integers (absent when off)
    find_cmax: FindCmax | None = None
    # empty the server's prefix cache before each level: "auto" (the endpoint of the engine
    # preflight detected), "off", or the reset endpoint's URL (absent from run.json when off)
    reset_prefix_cache: str = "off"
    # `--gpus`/`--gpu-hour-cost`/`--currency`: stored in run.json's `cost`, not the config
    cost: CostFields | None = Field(default=None, exclude=True)
    # `--power-metrics`: a DCGM exporter's /metrics, scraped for each level's energy
    power_metrics: str | None = None

    @field_validator("power_metrics")
    @classmethod
    def _check_power(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected an http(s) URL of a DCGM exporter's /metrics")
        return strip_credentials(value.strip())

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

    @field_validator("reset_prefix_cache")
    @classmethod
    def _check_reset(cls, value: str) -> str:
        value = value.strip()
        if value in ("auto", "off"):
            return value
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected auto, off or the http(s) URL of a prefix-cache reset")
        return strip_credentials(value)

    @field_validator("concurrency")
    @classmethod
    def _check_levels(cls, value: list[int]) -> list[int]:
        if not value or any(level < 1 for level in value):
            raise ValueError("concurrency levels must be a non-empty list of integers >= 1")
        return sorted(set(value))

    @field_validator("find_cmax")
    @classmethod
    def _cmax_needs_a_grid(cls, value: FindCmax | None, info: ValidationInfo) -> FindCmax | None:
        """Named by its own setting: the search probes levels its load's kind can add."""
        load = info.data.get("load")
        if value is not None and load is not None and load.probe(1) is None:
            raise ValueError(f"refines a concurrency grid, not a {load.kind} load")
        return value

    def load_spec(self) -> LoadSpec:
        """The plan this run sweeps: `load`, else the closed loop over `concurrency`."""
        if self.load is not None:
            return self.load
        return ClosedLoad(concurrency=self.concurrency, rounds=self.rounds)

    def stored(self) -> dict[str, object]:
        """The config as written to disk: credentials stripped from the URLs, query keys masked."""
        optional = ("load", "workload", "workers", "ray_address")
        unset = {name for name in optional if getattr(self, name) is None}
        unset = {
            name for name in ("load", "workload", "find_cmax", "power_metrics")
            if getattr(self, name) is None
        }
        if self.reset_prefix_cache == "off":  # run.json of a run without it is as it was
            unset.add("reset_prefix_cache")
        data = self.model_dump(mode="json", exclude=unset or None)
        client = data["client"]
        assert isinstance(client, dict)
        client["base_url"] = public_url(self.client.base_url)
        data["server_metrics"] = public_url(self.server_metrics)
        if "reset_prefix_cache" in data:
            data["reset_prefix_cache"] = public_url(self.reset_prefix_cache)
        if self.power_metrics is not None:
            data["power_metrics"] = public_url(self.power_metrics)
        return data
