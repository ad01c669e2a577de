"""`servecap run`'s flags for what to send: datasets, length distributions, a tokenizer,
shared prefixes, and trace replay (`--trace`, one level per `--trace-speed`).

They become a `WorkloadSpec` (stored in run.json) and, for a trace, a `ReplayLoad`
(`api.run.workload_options`, shared with the app). The files are read before any load, so a
malformed dataset or trace exits 2 with the file, line and column in one message.
"""

from __future__ import annotations

from typing import Annotated

import typer

from servecap.api.run.workload_options import WorkloadFlags, check_source, config_fields
from servecap.workload.traces import FORMATS

__all__ = ["WorkloadFlags", "check_source", "config_fields"]

LENGTH_HELP = "N, uniform:LO:HI, normal:MEAN:SD, lognormal:MEDIAN:SIGMA or trace:FILE"

InputTokens = Annotated[str, typer.Option(help=f"Prompt length in tokens: {LENGTH_HELP}")]
OutputTokens = Annotated[str, typer.Option(help=f"max_tokens per request: {LENGTH_HELP}")]
DatasetOpt = Annotated[
    str | None, typer.Option("--dataset", help="JSONL prompts: prompt, OpenAI messages or ShareGPT")
]
DatasetFormatOpt = Annotated[
    str, typer.Option("--dataset-format", help="auto, prompt, openai or sharegpt")
]
TokenizerOpt = Annotated[
    str | None, typer.Option("--tokenizer", help="Local tokenizer.json: prompts of exact length")
]
PrefixTokensOpt = Annotated[
    int | None, typer.Option("--prefix-tokens", help="Tokens of a shared system prompt")
]
PrefixGroupsOpt = Annotated[
    int, typer.Option("--prefix-groups", help="How many distinct shared system prompts")
]
TraceOpt = Annotated[
    str | None, typer.Option("--trace", help="Replay a trace file (mooncake, azure, burstgpt)")
]
TraceFormatOpt = Annotated[
    str, typer.Option("--trace-format", help=f"auto or one of {', '.join(FORMATS)}")
]
TraceSpeedOpt = Annotated[
    str, typer.Option("--trace-speed", help="Replay speeds, one level each, e.g. 0.5,1,2")
]
TraceStartOpt = Annotated[
    float, typer.Option("--trace-start", help="Start this many trace seconds in")
]
TraceDurationOpt = Annotated[
    float | None, typer.Option("--trace-duration", help="Replay this many trace seconds")
]
