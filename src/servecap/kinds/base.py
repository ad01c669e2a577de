"""What a load kind is: everything the rest of servecap asks of one, answered in one place.

A kind has two faces. Its *level* (a `LevelSpec` subclass, a frozen dataclass) answers what
is asked while a level runs: how many requests it sends, how many streams it demands (for
`--workers auto`), how it splits over worker processes, and how it runs (its scheduler).
Its `LoadKind` answers what is asked of a level by its key, also long after the run, from
stored rows: its presentation (key prefix, unit, axis title, methodology), its offered rate,
the users it stands for at the top level, the capacity fields it names, its own summary
fields and its steady-state window. Its pydantic load model (`kind: Literal[name]`) holds
the input rules and yields the levels. `kinds.registry` lists the kinds; nothing outside
`kinds/` branches on which kind a level is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.kinds.window import Window
from servecap.workload.source import for_worker

if TYPE_CHECKING:
    from servecap.core.workload_spec import WorkloadSpec
    from servecap.kinds.io import LevelIO
    from servecap.workload.source import RequestSource
    from servecap.workload.tokenize import ExactTokens



@dataclass(frozen=True, slots=True)
class KindText:
    """How one load kind names and explains its levels."""

    prefix: str  # in the key's text: "c" -> "c=32"
    unit: str  # after the value: "" -> "c=32", "/s" -> "rate=4/s"
    quantity: str  # the value's name, as a column or an axis: "concurrency"
    axis_title: str  # a chart's x axis
    mode: str  # short label of the load model: "closed loop"
    methodology: str  # one sentence for a report's methodology section
    bare_values: bool = False  # listed as bare numbers in tables (c=32 as 32)
    example: str = ""  # its text form (`--load`), e.g. "c=1,2,4,8"; "" when it has none


@dataclass(frozen=True, slots=True)
class KindTable:
    """A table a kind adds to a level's plan, report and app page (cells as text)."""

    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass(frozen=True, slots=True)
class KindSeries:
    """A chart a kind adds for a level: lines of (x, y) points over one x axis."""

    slug: str  # unique within a report, e.g. "shape-1-rate"
    title: str
    caption: str
    x_title: str
    y_title: str
    lines: dict[str, tuple[list[float], list[float | None]]]


@dataclass(frozen=True, slots=True)
class Share:
    """What worker `worker` runs of a level: a level spec of its own, the offset that maps
    its stream indices back to the level's (closed loop), and for a level whose workers
    each run a part of its users, `(k, N)`: the users with u % N == k."""

    worker: int
    level: LevelSpec
    stream_offset: int = 0
    part: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LevelSpec:
    """What one level runs: its key, how many requests it sends, whether it is warm-up.

    Subclasses (one per kind, plus a worker's planned share) override what differs."""

    key: LevelKey
    n_requests: int
    warmup: bool = False

    # The name a level of this type travels under to a worker process (`load.worker_wire`).
    WIRE: ClassVar[str] = ""

    def planned_requests(self) -> int:
        """How many requests the level will send (a lower bound for open-ended kinds)."""
        return self.n_requests

    def demand(self) -> int:
        """Streams the level may hold at once, for `--workers auto`."""
        return 1

    def split(self, workers: int, source: RequestSource | None = None) -> list[Share]:
        """The level's shares over `workers` processes (a worker with nothing gets none);
        `source` is the parent's, for a kind whose targets come from its rows (a trace)."""
        raise TypeError(f"a {type(self).__name__} cannot be split over workers")

    def window(self) -> Window | None:
        """The steady-state window the level's statistics count (None: every record)."""
        return None

    def starting_at(self, start_ns: int) -> LevelSpec:
        """The level as a worker runs it from the start all workers share."""
        return self

    async def run(self, io: LevelIO) -> None:
        """Send the level's requests through `io`; return when the level has ended.

        `io.stop` ends scheduling early (requests in flight finish); cancelling the task
        marks in-flight requests cancelled and still sinks them."""
        raise NotImplementedError


class LoadPlan(BaseModel):
    """The base of every kind's load model (`kind: Literal[name]`): the input rules live in
    its fields and validators; it yields the levels and says what else the run needs of it.
    `kinds.registry.LoadSpec` is the union of the kinds' models, discriminated on `kind`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str

    def levels(self) -> Sequence[LevelSpec]:
        raise NotImplementedError

    def max_in_flight(self) -> int:
        """The most requests in flight at once, which is also the connection pool's size."""
        raise NotImplementedError

    @classmethod
    def from_text(cls, spec: str, seed: int) -> LoadPlan:
        """The load from its text form, the part after `PREFIX=` (`--load`, the app's load
        field); a kind without one refuses."""
        raise UserInputError(f"this load kind has no text form: {spec!r}")

    def probe(self, value: int) -> LevelSpec | None:
        """A level at `value` beside the planned ones, for a search that bisects the
        kind's integer axis (`--find-cmax`); None where the kind has no such axis."""
        return None

    def own_source(self, seed: int, tokenizer: ExactTokens | None) -> RequestSource | None:
        """The source of what its levels send when the kind brings its own (a trace's
        rows); None: the run's workload (built-in prompts, a dataset, lengths)."""
        return None

    def worker_source(
        self, source: RequestSource, worker: int, workers: int
    ) -> RequestSource:
        """What worker `worker` of `workers` sends from: its own stretch of the run's
        source, so no two workers send the same request."""
        return for_worker(source, worker, workers)

    def extra_body(self) -> dict[str, Any]:
        """JSON the kind merges into every request (the user's `--extra-body` wins)."""
        return {}

    def check_source(self, source: RequestSource, workload: WorkloadSpec | None) -> None:
        """Refuse (UserInputError) a source its levels cannot send from, before any load."""


class LoadKind:
    """A kind's answers by level key. Subclasses override what their kind means."""

    def __init__(
        self, name: str, text: KindText, load: type[LoadPlan],
        levels: Sequence[type[LevelSpec]],
    ) -> None:  # fmt: skip
        self.name = name  # the `kind` of its load model in run.json
        self.text = text
        self.load = load
        self.levels = tuple(levels)

    def key(self, value: int | float) -> LevelKey:
        return LevelKey(self.text.prefix, value, self.text.unit)

    def owns(self, key: LevelKey) -> bool:
        return key.prefix == self.text.prefix and key.unit == self.text.unit

    def scheduled(self) -> bool:
        """Whether its requests are sent at target times (lateness and the schedule's own
        TTFT are measured), rather than when a stream frees up."""
        return True

    def offered_rate(self, key: LevelKey) -> float | None:
        """The rate (requests/s) a level of this kind offers, if it offers one."""
        return None

    def streams(self, key: LevelKey) -> int | None:
        """The streams a level holds throughout, if its kind holds a fixed number (then the
        per-user rates of its requests add up to the system's)."""
        return None

    def judged_per_call(self) -> bool:
        """Whether `plan` judges its levels on the per-call SLOs (TTFT, TPS) and counts them
        for C_max; a kind that judges its levels otherwise says so here."""
        return True

    def users_at(self, key: LevelKey, latency_mean_s: float, think_time_s: float) -> int | None:
        """Users the top level within the SLOs stands for (None: the kind cannot say)."""
        return None

    def capacity_fields(self, key: LevelKey) -> dict[str, Any]:
        """The fields a capacity plan names its top level by (`c_max`, `rate_max`)."""
        return {}

    def summary_fields(self, key: LevelKey, records: list[RequestRecord]) -> dict[str, Any]:
        """The kind's own summary fields of one level from all its records (warm-up too):
        its own block goes in `kind_block` (summary.json), not in more flat columns."""
        return {}

    def tables(self, level: LevelSummary, slo: SLO) -> list[KindTable]:
        """Tables of the level's own (from its `kind_block`) judged against `slo`: `plan`,
        the report and the app show them under the level."""
        return []

    def series(self, level: LevelSummary) -> list[KindSeries]:
        """Charts of the level's own: the report and the app draw them."""
        return []
