"""What a capacity answer's sentence reads: the fields every load's answer shares.

`storage.capacity_answer.CapacityAnswer` holds them; the rate's and the agents' sentences
(`rate_answer`, `agents_answer`) read an answer through this view, so that the answer can
hold their fields without those modules and it importing each other.
"""

from __future__ import annotations

from typing import Protocol

from servecap.core.config import SLO


class AnswerView(Protocol):
    """The shared fields of a capacity answer, read-only."""

    @property
    def deployment(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def complete(self) -> bool: ...
    @property
    def slo(self) -> SLO: ...
    @property
    def c_max(self) -> int | None: ...
    @property
    def binding_slo(self) -> str | None: ...
    @property
    def time_scale(self) -> float: ...
    @property
    def predicted_users(self) -> int | None: ...
    @property
    def verified_users(self) -> int | None: ...
    @property
    def users_note(self) -> str | None: ...
    @property
    def requests(self) -> int: ...
    @property
    def elapsed_s(self) -> float: ...
