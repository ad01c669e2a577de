"""`comparison.json`: a comparison's targets, its interleaved slots, statistics and headline.

The run directories beside it are ordinary runs (their summaries pool a level's repeats);
`comparison.json` says which requests of each run belong to which repeat (each slot's first
and last request id, its own level record), so the statistics can be recomputed from the
records, e.g. by `servecap report` under other SLOs.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from servecap.analysis.capacity_delta import Headline, headline
from servecap.analysis.comparison import PairComparison, Repeats, compare_targets
from servecap.api.comparison.config import CompareConfig
from servecap.core import json_input
from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.load.interleave import Slot
from servecap.stats.difference import MIN_REPEATS_BETWEEN
from servecap.storage.run_dir import REQUESTS_FILE, iter_records
from servecap.storage.safe_files import write_atomic

COMPARISON_FILE = "comparison.json"
FORMAT = 1
METHOD = (
    "Each target's statistic is the mean over repeats of each repeat's statistic. Interval: "
    "seeded percentile bootstrap of B - A and B / A; requests are resampled within each "
    f"repeat, and with {MIN_REPEATS_BETWEEN} or more repeats the repeats are resampled too "
    "(paired by repeat, two-stage). A verdict names a better target only when the "
    "difference's interval excludes 0. Users difference: interval arithmetic on the two "
    "targets' users intervals (conservative)."
)


@dataclass
class SlotRecord:
    position: int
    target: str
    level: str
    repeat: int
    first_id: int | None
    last_id: int | None
    n_records: int
    summary: dict[str, Any] | None = None


@dataclass
class ComparisonFile:
    targets: list[dict[str, Any]]
    repeats: int
    seed: int
    workload: dict[str, Any]
    planned: list[dict[str, Any]]
    slots: list[SlotRecord] = field(default_factory=list)
    status: str = "running"
    stop_reason: str | None = None  # why an incomplete comparison stopped, when known
    interleaved: bool = True
    # "interleaved": one slot at a time in the balanced order; "lockstep": every target ran
    # each (repeat, level) at once, each in its own process (`api.comparison.lockstep`)
    schedule: str = "interleaved"
    method: str = METHOD
    compared: list[list[str]] = field(default_factory=list)  # [baseline, other] pairs
    pairs: list[dict[str, Any]] = field(default_factory=list)
    headlines: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def start(
        cls, config: CompareConfig, comp_dir: Path, targets: list[dict[str, Any]],
        order: list[Slot], levels: list[Any],
    ) -> ComparisonFile:
        workload = config.workload.stored()
        for per_target in ("name", "model", "client", "extra_body"):
            workload.pop(per_target, None)
        planned = [
            {"position": s.position, "target": s.target, "level": str(levels[s.level_index].key),
             "repeat": s.repeat}
            for s in order
        ]
        compared = [list(pair) for pair in config.pairs]
        return cls(targets, config.repeats, config.workload.seed, workload, planned,
                   compared=compared)

    def analyse(self, samples: dict[str, dict[LevelKey, Repeats]], slo: SLO) -> list[Headline]:
        pairs = compare_targets(samples, interleaved=self.interleaved, seed=self.seed,
                                pairs=[(a, b) for a, b in self.compared])
        heads = [headline(p, slo) for p in pairs]
        self.pairs = [pair_json(p) for p in pairs]
        self.headlines = [{"slo": slo.model_dump(), **_headline_json(h)} for h in heads]
        return heads

    def to_json(self) -> dict[str, Any]:
        return {"kind": "servecap-comparison", "format": FORMAT, **asdict(self)}


def pair_json(pair: PairComparison) -> dict[str, Any]:
    levels = []
    for lv in pair.levels:
        metrics = {}
        for (metric, stat), d in lv.diffs.items():
            better = {"a": pair.a, "b": pair.b}.get(d.better.value, "none")
            metrics[f"{metric}_{stat}"] = {
                "a": asdict(d.a), "b": asdict(d.b), "difference": asdict(d.difference),
                "ratio": asdict(d.ratio) if d.ratio else None, "better": better,
                "cv_a": d.cv_a, "cv_b": d.cv_b, "cv_warning": d.cv_warning,
                "repeats": d.repeats, "between_repeats": d.between_repeats,
                "confidence": d.confidence,
            }
        levels.append({"level": str(lv.level), "metrics": metrics})
    return {"a": pair.a, "b": pair.b, "interleaved": pair.interleaved, "levels": levels}


def _headline_json(h: Headline) -> dict[str, Any]:
    return {
        "a": asdict(h.a), "b": asdict(h.b),
        "users_difference": asdict(h.users_difference) if h.users_difference else None,
        "speedups": [{"level": str(s.level), **asdict(s.ratio)} for s in h.speedups],
        "break_even": h.break_even, "break_even_low": h.break_even_low,
        "break_even_high": h.break_even_high, "interleaved": h.interleaved,
        "sentences": h.sentences,
    }


def write_comparison(comp_dir: Path, stored: ComparisonFile) -> None:
    write_atomic(comp_dir / COMPARISON_FILE, json.dumps(stored.to_json(), indent=2) + "\n")


def is_comparison(path: Path) -> bool:
    return (path / COMPARISON_FILE).is_file()


def read_comparison(comp_dir: Path) -> dict[str, Any]:
    """`comparison.json` as stored; unreadable is a `UserInputError` (one message)."""
    try:
        data = json_input.loads((comp_dir / COMPARISON_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserInputError(f"cannot read {comp_dir / COMPARISON_FILE}: {exc}") from None
    if not isinstance(data, dict):
        raise UserInputError(f"{comp_dir / COMPARISON_FILE} is not a comparison")
    return data


def load_comparison(comp_dir: Path) -> tuple[dict[str, Any], dict[str, dict[LevelKey, Repeats]]]:
    """`comparison.json` and every target's records grouped by level and repeat."""
    data = read_comparison(comp_dir)
    samples: dict[str, dict[LevelKey, Repeats]] = {}
    for target in data.get("targets", []):
        records = {r.request_id: r for r in iter_records(comp_dir / target["run_dir"] /
                                                          REQUESTS_FILE)}
        per_level: dict[LevelKey, Repeats] = {}
        for slot in data.get("slots", []):
            if slot["target"] != target["name"] or slot["first_id"] is None:
                continue
            ids = range(slot["first_id"], slot["last_id"] + 1)
            rep = [records[i] for i in ids if i in records]
            per_level.setdefault(LevelKey.parse(slot["level"]), []).append(rep)
        samples[target["name"]] = per_level
    return data, samples


def reanalyse_pairs(
    comp_dir: Path, slo: SLO
) -> tuple[dict[str, Any], list[PairComparison], list[Headline]]:
    """A stored comparison's file, its pairs and their headlines under `slo`, from its
    records."""
    data, samples = load_comparison(comp_dir)
    pairs = compare_targets(samples, interleaved=bool(data.get("interleaved", True)),
                            seed=int(data.get("seed", 0)),
                            pairs=[(a, b) for a, b in data.get("compared", [])])
    return data, pairs, [headline(p, slo) for p in pairs]
