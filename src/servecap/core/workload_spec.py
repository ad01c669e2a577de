"""What a run sends, when it is not the built-in prompts: a dataset, length distributions,
a tokenizer for exact prompt lengths, shared prefixes (`RunConfig.workload`).

Only the specs as the user typed them are kept (stored in run.json); `api.run.workload` reads
the files and parses the distributions before any load, so a bad one fails the run at once.
A trace replay's file lives in its load plan (`load_spec.ReplayLoad`), not here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

DatasetFormat = Literal["auto", "prompt", "openai", "sharegpt"]


class WorkloadSpec(BaseModel):
    """The request source's settings; every unset field keeps the built-in behaviour."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_tokens: str | None = None  # a length spec (workload.lengths) when not a plain N
    output_tokens: str | None = None
    dataset: str | None = None
    dataset_format: DatasetFormat = "auto"
    tokenizer: str | None = None
    prefix_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    prefix_groups: int = Field(default=1, ge=1, le=1_000_000)
    # `--prefix-hit-rate`: prompts of `input_tokens` built so that an ideal prefix cache
    # serves this share of their tokens (a pool of `prefix_groups` shared prefixes, each
    # followed by a fresh suffix: workload.prefix_cache.hit_rate_split)
    prefix_hit_rate: float | None = Field(default=None, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _check(self) -> WorkloadSpec:
        if self.dataset is not None and self.input_tokens is not None:
            raise ValueError("a dataset brings its own prompts: drop the input-tokens spec")
        if self.dataset is not None and self.prefix_tokens is not None:
            raise ValueError("shared prefixes are for synthetic prompts, not a dataset")
        if self.prefix_hit_rate is not None:
            self._check_hit_rate()
        return self

    def _check_hit_rate(self) -> None:
        """A controlled hit rate builds its own prompts of one plain length."""
        if self.dataset is not None:
            raise ValueError("a controlled prefix hit rate builds its own prompts, not a dataset")
        if self.prefix_tokens is not None:
            raise ValueError("give a prefix hit rate or shared prefix tokens, not both")
        if self.input_tokens is not None:
            raise ValueError("a controlled prefix hit rate needs a plain prompt length (N)")

    @property
    def is_default(self) -> bool:
        return self == WorkloadSpec()
