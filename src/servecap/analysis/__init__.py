"""L3: cross-run comparison and findings over plain level summaries (no storage, no plotting).

Entry point: `analyse(series, pairs, slo)` returns an `Analysis`: aggregate output, speedup per
pair with break-even, collapse and consistency checks, SLO matrix and capacity, findings that
cite their numbers, and recommendations per scenario.
"""

from servecap.analysis.compare import Analysis, AnalysisOptions, analyse
from servecap.analysis.findings import Finding
from servecap.analysis.series import ConfigSeries
from servecap.analysis.speedup import Pair, infer_pairs, parse_pair

__all__ = [
    "Analysis",
    "AnalysisOptions",
    "ConfigSeries",
    "Finding",
    "Pair",
    "analyse",
    "infer_pairs",
    "parse_pair",
]
