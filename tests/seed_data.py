"""The seed report's Appendix A, kept in the repository so the tests that check servecap
against it (import, plan, analysis, report, simulator fit) never depend on a folder beside
the clone. A copy of ``../shared/seed/kimi-k3-b300-appendix-a.csv``: published figures."""

from __future__ import annotations

from pathlib import Path

SEED_CSV = Path(__file__).resolve().parent / "data" / "kimi-k3-b300-appendix-a.csv"
