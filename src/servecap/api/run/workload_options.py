"""Run options for what to send, as plain data shared by the CLI and the app: a dataset,
length distributions, a tokenizer, shared prefixes, a trace replay and its speeds.

`config_fields` turns them into `RunConfig` fields (a `WorkloadSpec`, and for a trace a
`ReplayLoad` whose `rows` come from reading the trace's window); `check_source` reads every
other file the run will. Both raise `UserInputError`s naming the file, line and column, so a
front end calls them before any load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import ValidationError

from servecap.api.run.run_config import RunConfig
from servecap.api.run.workload import build_source
from servecap.core.errors import SettingError, bad_setting
from servecap.core.validation import setting_error
from servecap.core.workload_spec import WorkloadSpec
from servecap.kinds.replay import ReplayLoad
from servecap.workload.lengths import parse_length_spec
from servecap.workload.traces import FORMATS

DEFAULT_INPUT_TOKENS = RunConfig.model_fields["input_tokens"].default


@dataclass(frozen=True)
class WorkloadFlags:
    """The flags as typed (`--input-tokens`/`--output-tokens` may be distributions)."""

    input_tokens: str
    output_tokens: str
    dataset: str | None = None
    dataset_format: str = "auto"
    tokenizer: str | None = None
    prefix_tokens: int | None = None
    prefix_groups: int = 1
    trace: str | None = None
    trace_format: str = "auto"
    trace_speed: str = "1"
    trace_start: float = 0.0
    trace_duration: float | None = None
    prefix_hit_rate: float | None = None


def parse_speeds(text: str) -> list[float]:
    """`0.5,1,2` -> speeds > 0."""
    speeds = []
    for item in (part.strip() for part in text.split(",")):
        try:
            speed = float(item)
        except ValueError:
            speed = math.nan
        if not (math.isfinite(speed) and speed > 0):
            raise bad_setting("trace_speed", f"{item!r}: expected a number > 0", "invalid ")
        speeds.append(speed)
    return speeds


def plain_count(spec: str) -> int | None:
    """`128` -> 128 (`-1` too: the config's own check names the flag); a distribution ->
    None."""
    text = spec.strip()
    return int(text) if text.removeprefix("-").isdigit() else None


def config_fields(flags: WorkloadFlags) -> dict[str, object]:
    """RunConfig fields for these flags: input/output tokens, `workload`, and `load`."""
    tokens_in, tokens_out = _lengths(flags)
    if flags.trace is not None:
        _refuse_with_trace(flags)
        return {"input_tokens": tokens_in, "output_tokens": tokens_out,
                "workload": _spec(flags, False), "load": _replay(flags)}
    _refuse_unused_lengths(flags)
    workload = _spec(flags, True)
    return {"input_tokens": tokens_in, "output_tokens": tokens_out, "workload": workload}


def _refuse_unused_lengths(flags: WorkloadFlags) -> None:
    """A prompt length that would be ignored is refused: a dataset brings its own prompts.
    (A shared prefix longer than the input tokens is used: it comes on top of them.)"""
    if flags.dataset is not None and flags.input_tokens.strip() != str(DEFAULT_INPUT_TOKENS):
        raise SettingError("{dataset} brings its own prompts: drop {input_tokens}", "dataset",
                           "input_tokens")


def check_source(config: RunConfig) -> None:
    """Read every file the run will (dataset, tokenizer; the trace was read for its rows):
    bad input fails here, before any load."""
    config.load_spec().check_source(build_source(config), config.workload)


def _lengths(flags: WorkloadFlags) -> tuple[int, int]:
    """The config's plain lengths: the number, or a distribution's mean (parsed to check)."""
    out = []
    for spec, role in ((flags.input_tokens, "input"), (flags.output_tokens, "output")):
        count = plain_count(spec)
        if count is None:
            count = max(1, round(parse_length_spec(spec, role).mean))  # type: ignore[arg-type]
        out.append(count)
    return out[0], out[1]


def _spec(flags: WorkloadFlags, with_lengths: bool) -> WorkloadSpec | None:
    rate = flags.prefix_hit_rate
    if rate is not None and not (math.isfinite(rate) and 0.0 <= rate <= 1.0):
        raise bad_setting("prefix_hit_rate", f"{rate!r}: expected a fraction in 0..1")
    try:
        spec = WorkloadSpec(
            input_tokens=_dist(flags.input_tokens) if with_lengths else None,
            output_tokens=_dist(flags.output_tokens) if with_lengths else None,
            dataset=flags.dataset,
            dataset_format=flags.dataset_format,  # type: ignore[arg-type]
            tokenizer=flags.tokenizer,
            prefix_tokens=flags.prefix_tokens,
            prefix_groups=flags.prefix_groups,
            prefix_hit_rate=rate,
        )
    except ValidationError as exc:
        raise setting_error(exc) from exc
    return None if spec.is_default else spec


def _dist(spec: str) -> str | None:
    return None if plain_count(spec) is not None else spec.strip()


def _refuse_with_trace(flags: WorkloadFlags) -> None:
    """A trace brings its own prompts, lengths and schedule."""
    clashes = [
        name for name, used in (
            ("dataset", flags.dataset is not None),
            ("prefix_tokens", flags.prefix_tokens is not None),
            ("prefix_hit_rate", flags.prefix_hit_rate is not None),
            ("input_tokens", plain_count(flags.input_tokens) is None),
            ("output_tokens", plain_count(flags.output_tokens) is None),
        ) if used
    ]
    if clashes:
        drop = ", ".join("{" + name + "}" for name in clashes)
        raise SettingError(f"{{trace}} brings its own prompts and lengths: drop {drop}",
                           "trace", *clashes)


def _replay(flags: WorkloadFlags) -> ReplayLoad:
    assert flags.trace is not None
    if flags.trace_format != "auto" and flags.trace_format not in FORMATS:
        raise bad_setting("trace_format", f"{flags.trace_format!r}: expected auto or one of "
                          f"{', '.join(FORMATS)}")
    if not (math.isfinite(flags.trace_start) and flags.trace_start >= 0):
        raise bad_setting("trace_start", f"{flags.trace_start!r}: expected seconds >= 0")
    duration = flags.trace_duration
    if duration is not None and not (math.isfinite(duration) and duration > 0):
        raise bad_setting("trace_duration", f"{duration!r}: expected seconds > 0")
    probe = ReplayLoad(
        trace=flags.trace, format=flags.trace_format, start_s=flags.trace_start,
        duration_s=duration, speeds=parse_speeds(flags.trace_speed), rows=1,
    )
    return probe.model_copy(update={"rows": len(probe.trace_rows())})
