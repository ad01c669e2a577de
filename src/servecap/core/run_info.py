"""`run.json`: what a run is (config, server, deployment, status), never a secret."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RunSource = Literal["measured", "imported"]
RunStatus = Literal["running", "complete", "incomplete"]


class RunInfo(BaseModel):
    """The metadata of one run directory."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = 1
    name: str
    source: RunSource = "measured"
    status: RunStatus = "complete"
    tool_version: str = ""
    created_at: str = ""
    anchor_wall_ns: int | None = None
    anchor_perf_ns: int | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    server: dict[str, Any] = Field(default_factory=dict)
    deployment: dict[str, Any] = Field(default_factory=dict)
    time_scale: float | None = None
    closed_loop: bool = True
    notes: list[str] = Field(default_factory=list)
    stop_reason: str | None = None
    # Per level ("64": {loop_lag_p99_ms, client_cpu_pct, client_bound}), so a summary
    # recomputed from requests.jsonl keeps the client's own health.
    client_health: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # The process that wrote a run still `running`, so that a reader can tell a run killed
    # (SIGKILL, power loss: nothing could mark it) from one in progress.
    pid: int | None = None
    host: str | None = None
    # The /metrics scraper: mode, url, hz, state ("on"/"off" and why), scrapes, errors by kind
    server_metrics: dict[str, Any] = Field(default_factory=dict)
    # Worker processes or Ray actors (`--workers`, `--ray`): how many, each one's clock
    # against the parent's (min-RTT ping) and which died; empty for a one-process run.
    workers: dict[str, Any] = Field(default_factory=dict)
    # The prefix cache (`--reset-prefix-cache`, `--prefix-hit-rate`): the reset asked for and
    # what was done about it, the hit rate the prompts were built for; empty when neither.
    prefix_cache: dict[str, Any] = Field(default_factory=dict)
    # `--gpus`, `--gpu-hour-cost`, `--currency` as given to `run` (`core.cost.CostFields`);
    # empty for runs without them and for runs recorded before them
    cost: dict[str, Any] = Field(default_factory=dict)
    # `--power-metrics`: the DCGM exporter's scraper (url, hz, scrapes, errors by kind)
    power_metrics: dict[str, Any] = Field(default_factory=dict)
    # A run imported from another tool's file (`servecap import`): its format, tool and
    # version, the files, whether it kept per-request data, and every field not mapped or
    # defined differently; empty for a run servecap made or a seed table.
    imported: dict[str, Any] = Field(default_factory=dict)

    @property
    def insecure(self) -> bool:
        """The run skipped TLS verification (`--insecure`): every view of it says so."""
        client = self.config.get("client")
        return isinstance(client, dict) and client.get("insecure") is True
