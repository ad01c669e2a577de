"""A finished comparison's cost per served user, for `servecap compare` to print after its
headline (`report` computes the same from the targets' stored costs)."""

from __future__ import annotations

from typing import Any

from servecap.analysis.capacity_delta import Capacity
from servecap.analysis.cost_delta import cost_delta
from servecap.api.comparison.config import CompareConfig
from servecap.api.comparison.side import target_cost
from servecap.core.cost import CostBasis


def _confidence(pair: dict[str, Any]) -> float:
    for level in pair.get("levels", []):
        for metric in level.get("metrics", {}).values():
            return float(metric["confidence"])
    return 0.95


def cost_lines(
    headlines: list[dict[str, Any]], pairs: list[dict[str, Any]], config: CompareConfig
) -> list[list[str]]:
    """Per headline (in its order), the cost sentence, or none without GPUs and a price."""
    bases: dict[str, CostBasis | None] = {}
    for target in config.targets:
        fields = target_cost(config.workload.cost, target)
        bases[target.name] = fields.over({}) if fields is not None else None
    out = []
    for head, pair in zip(headlines, pairs, strict=False):
        a, b = Capacity(**head["a"]), Capacity(**head["b"])
        delta = cost_delta(a, b, bases.get(a.name), bases.get(b.name))
        out.append([] if delta is None else [delta.sentence(_confidence(pair))])
    return out
