"""The deployment table is computed from run metadata: only differing keys in the diff."""

from __future__ import annotations

from servecap.report.deployment import deployment_table, flatten
from servecap.report.model import RunMeta


def _meta(name: str, deployment: dict, server: dict | None = None) -> RunMeta:
    return RunMeta(name=name, path="/nonexistent", source="measured", status="complete",
                   tool_version="", created_at="", time_scale=None, notes=[], config={},
                   server=server or {}, deployment=deployment, n_requests=None, levels=[])


def test_flatten_parses_flags_and_nesting() -> None:
    flat = flatten({"engine": "vllm", "flags": ["--tp", "8", "--kv-cache-dtype=fp8", "--x"],
                    "env": {"A": 1}})
    assert flat == {"engine": "vllm", "flags.--tp": "8", "flags.--kv-cache-dtype": "fp8",
                    "flags.--x": "true", "env.A": "1"}


def test_only_differing_keys_in_the_diff() -> None:
    a = _meta("a", {"engine": "vllm", "flags": ["--tp", "8", "--mem", "0.95"],
                    "launch_command": "vllm serve m --tp 8"},
              {"models": ["m"], "props": {"noise": 1}})
    b = _meta("b", {"engine": "sglang", "flags": ["--tp", "8"]},
              {"models": ["m"], "props": {"noise": 2}})
    table = deployment_table([a, b])
    assert table.differing == ["engine", "flags.--mem"]
    assert "flags.--tp" in table.keys and "server.models" in table.keys
    assert not any(key.startswith("server.props") for key in table.keys)  # raw probe bodies
    assert table.commands == {"a": "vllm serve m --tp 8"}
    assert table.values["b"].get("flags.--mem") is None
