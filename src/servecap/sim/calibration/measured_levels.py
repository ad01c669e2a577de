"""The measured levels a profile is calibrated to, read from what a user has.

Inputs: an Appendix-A style CSV (``config,concurrency,ttft_mean_ms,...``; one set of levels
per config), a servecap ``summary.json`` (a JSON list of level rows), or a run directory that
holds one. Only ``concurrency, ttft_mean_ms, itl_mean_ms, tps_mean, latency_mean_s`` are
read (the P90 TTFT, ``ttft_p90_ms``, too where present: the fit matches the tail a P90
capacity answer rests on); any of the means may be missing, not all of them.

Each level is read with its own workload: a CSV's ``input_tokens`` and ``output_tokens``
columns, else the tokens the server counted (``prompt_tokens_mean``, ``completion_tokens_mean``
where its usage reported them: what the engine worked on), else what a run asked for
(``input_tokens_sent_mean``, ``output_tokens_sent_mean``); 128/128, the seed's, where a source
does not say. A run's levels that asked for the same lengths share one workload, their mean.
A profile's ``[calibration] sweep`` names the workloads it was fitted on
(``describe_workloads``, read back by ``calibrated_workloads``).

Bad input raises ``CalibrationInputError`` with a message that says which row and why, before
anything is fitted.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from servecap.sim.model.sweep import METRICS, TAIL_METRICS, by_workload

COLUMNS: tuple[str, ...] = ("concurrency", *METRICS, *TAIL_METRICS)
#: where a row's workload is read from, first found wins: a table's stated lengths, else what
#: the server counted (its usage), else what a run asked for. The engine works, and costs, per
#: token it counts, and asked lengths map onto those unevenly: on llama-server with the test
#: model 128 asked came to 134 served (its chat template) and 512 to 433 (another tokenizer),
#: so a profile fitted on the asked 128/128 priced 512/32's c=1 TTFT 44% high; fitted and
#: asked in served tokens, 12% (the same measurements; tests/engines/test_sim_proof.py)
WORKLOAD_COLUMNS: dict[str, tuple[str, ...]] = {
    "prompt_tokens": ("input_tokens", "prompt_tokens_mean", "input_tokens_sent_mean"),
    "output_tokens": ("output_tokens", "completion_tokens_mean", "output_tokens_sent_mean"),
}
#: the server's counts, read only from a row that says they came from its usage
SERVED_COLUMNS = frozenset({"prompt_tokens_mean", "completion_tokens_mean"})


class CalibrationInputError(ValueError):
    """A calibration input that cannot be read; the message says which and why."""


def _number(value: Any, where: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise CalibrationInputError(f"{where}: not a number: {value!r}") from None
    # NaN, Infinity or a negative measurement is no measurement: a profile fitted past it
    # is one `plan` refuses later (so say it here)
    if not math.isfinite(out) or out < 0:
        raise CalibrationInputError(f"{where}: {value!r} is not a finite number >= 0")
    return out


def _clean_row(raw: dict[str, Any], where: str) -> dict[str, float]:
    row: dict[str, float] = {}
    for key in COLUMNS:
        value = _number(raw.get(key), f"{where} column {key}")
        if value is not None:
            row[key] = value
    if row.get("concurrency", 0) < 1:
        raise CalibrationInputError(f"{where}: needs a concurrency >= 1")
    if not any(key in row for key in METRICS):  # a P90 alone: the fit is of means
        raise CalibrationInputError(f"{where}: has none of the columns {', '.join(METRICS)}")
    served = raw.get("tokens_from_usage") is True
    for key, names in WORKLOAD_COLUMNS.items():
        readable = [n for n in names if served or n not in SERVED_COLUMNS]
        found = (_number(raw.get(n), f"{where} column {n}") for n in readable)
        value = next((v for v in found if v is not None), None)
        if value is not None:
            if value < 1:
                raise CalibrationInputError(f"{where}: {key} must be >= 1, not {value:g}")
            row[key] = value
    return row


def describe_workloads(levels: list[dict[str, float]]) -> str:
    """``"128 input / 128 output tokens"``; several workloads joined with ``" and "``
    (``calibrated_workloads`` reads it back)."""
    return " and ".join(
        f"{prompt} input / {output} output tokens" for prompt, output in by_workload(levels)
    )


_WORKLOAD_TEXT = re.compile(r"(\d+) input / (\d+) output tokens")


def calibrated_workloads(calibration: Mapping[str, Any]) -> list[str]:
    """The workloads (``"128/128"``) a profile's ``[calibration] sweep`` names (every seed
    profile's does); empty when it says none."""
    sweep = calibration.get("sweep")
    if not isinstance(sweep, str):
        return []
    return [f"{p}/{o}" for p, o in _WORKLOAD_TEXT.findall(sweep)]


def _read_csv(path: Path) -> dict[str, list[dict[str, float]]]:
    out: dict[str, list[dict[str, float]]] = {}
    with path.open(newline="", encoding="utf-8") as fh:
        for i, raw in enumerate(csv.DictReader(fh), start=2):
            config = (raw.get("config") or path.stem).strip()
            out.setdefault(config, []).append(_clean_row(raw, f"{path} line {i}"))
    return out


def _read_summary(path: Path) -> dict[str, list[dict[str, float]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CalibrationInputError(f"{path}: not valid JSON: {exc}") from None
    except RecursionError:
        raise CalibrationInputError(f"{path}: not valid JSON: nested too deeply") from None
    if isinstance(data, dict) and isinstance(data.get("levels"), list):
        data = data["levels"]
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise CalibrationInputError(f"{path}: expected a JSON list of level rows")
    name = path.parent.name if path.name == "summary.json" else path.stem
    rows = [_clean_row(r, f"{path} row {i}") for i, r in enumerate(data, 1)]
    return {name: _one_workload_per_ask(data, rows)}


def _one_workload_per_ask(raw: list[dict[str, Any]], rows: list[dict[str, float]]
                          ) -> list[dict[str, float]]:  # fmt: skip
    """``rows`` with the levels that asked for the same lengths at those lengths' mean over
    them. The server counts each level's own prompts (seeded texts: 134 tokens at c=1, 139 at
    c=4 in one run), and a run's levels are one workload to the fit and its held-out split."""
    groups: dict[tuple[Any, Any], list[dict[str, float]]] = {}
    for source, row in zip(raw, rows, strict=True):
        asked = (source.get("input_tokens_sent_mean"), source.get("output_tokens_sent_mean"))
        groups.setdefault(asked, []).append(row)
    for asked, members in groups.items():
        for key in WORKLOAD_COLUMNS:
            values = [row[key] for row in members if key in row]
            if asked == (None, None) or len(values) < len(members):
                continue
            for row in members:
                row[key] = float(round(sum(values) / len(values)))
    return rows


def read_levels(source: str | Path) -> dict[str, list[dict[str, float]]]:
    """Level rows by config name from a CSV, a summary.json or a run directory."""
    path = Path(source)
    if path.is_dir():
        path = path / "summary.json"
        if not path.is_file():
            raise CalibrationInputError(f"{source}: a directory without summary.json")
    if not path.is_file():
        raise CalibrationInputError(f"{source}: no such file")
    try:
        out = _read_csv(path) if path.suffix.lower() == ".csv" else _read_summary(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationInputError(f"{source}: cannot read: {exc}") from None
    if not out or not any(out.values()):
        raise CalibrationInputError(f"{source}: no level rows")
    return out


__all__ = [
    "COLUMNS",
    "CalibrationInputError",
    "calibrated_workloads",
    "describe_workloads",
    "read_levels",
]
