"""The run's request source, built from its config before any load.

Reading a dataset or trace and parsing a length spec happens here, when the run is set up,
so a malformed file or spec is a `UserInputError` (naming the file, line and column) before
the first request. Which source: a replay's trace (`ReplayLoad`), else `RunConfig.workload`
(a dataset, or synthetic lengths with optional shared prefixes and exact tokenization),
else the built-in prompts exactly as before.
"""

from __future__ import annotations

from typing import Any

from servecap.api.run.run_config import RunConfig
from servecap.core.errors import SettingError
from servecap.core.workload_spec import WorkloadSpec
from servecap.workload.datasets import read_dataset
from servecap.workload.lengths import parse_length_spec
from servecap.workload.prefix_cache import hit_rate_split
from servecap.workload.source import RequestSource, builtin_source
from servecap.workload.sources import DatasetSource, SyntheticSource
from servecap.workload.text import SharedPrefixes
from servecap.workload.tokenize import ExactTokens, load_tokenizer


def build_source(config: RunConfig) -> RequestSource:
    """The source of what `config`'s run sends (reads and checks its files)."""
    spec = config.workload or WorkloadSpec()
    tokenizer = load_tokenizer(spec.tokenizer) if spec.tokenizer else None
    own = config.load_spec().own_source(config.seed, tokenizer)
    if own is not None:
        return own
    if spec.is_default:
        return builtin_source(config.input_tokens, config.output_tokens, config.seed)
    if spec.dataset is not None:
        return _dataset_source(config, spec)
    return _synthetic_source(config, spec, tokenizer)


def _dataset_source(config: RunConfig, spec: WorkloadSpec) -> DatasetSource:
    assert spec.dataset is not None
    if spec.output_tokens is not None:
        raise SettingError(
            f"{{output_tokens}} {spec.output_tokens!r}: with {{dataset}} give one number "
            "(rows without their own max_tokens ask for it)", "output_tokens", "dataset")
    dataset = read_dataset(spec.dataset, spec.dataset_format)
    return DatasetSource(dataset, config.output_tokens, seed=config.seed)


def _synthetic_source(
    config: RunConfig, spec: WorkloadSpec, tokenizer: ExactTokens | None
) -> SyntheticSource:
    inputs = parse_length_spec(spec.input_tokens or str(config.input_tokens), "input")
    outputs = parse_length_spec(spec.output_tokens or str(config.output_tokens), "output")
    prefixes = None
    if spec.prefix_hit_rate is not None:  # the prefix is part of the prompt's length
        split = hit_rate_split(spec.prefix_hit_rate, config.input_tokens)
        inputs = parse_length_spec(str(split.suffix_tokens), "input")
        if split.prefix_tokens:
            prefixes = SharedPrefixes(split.prefix_tokens, spec.prefix_groups, config.seed)
    elif spec.prefix_tokens is not None:
        prefixes = SharedPrefixes(spec.prefix_tokens, spec.prefix_groups, config.seed)
    return SyntheticSource(
        inputs, outputs, seed=config.seed, prefixes=prefixes, tokenizer=tokenizer
    )


def client_extra_body(config: RunConfig) -> dict[str, Any]:
    """The JSON merged into every request: the load kind's own (a replay asks the engine
    not to stop at EOS, so each row gets its recorded output length), then `--extra-body`."""
    return {**config.load_spec().extra_body(), **config.extra_body}
