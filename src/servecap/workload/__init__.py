"""L1: what a run sends and when, sans-I/O beyond reading its input files.

- `prompts`: the built-in prompts (closed loop's default source).
- `arrivals`: open-loop target send times (poisson, constant, gamma with burstiness K).
- `lengths`: token-length distributions parsed from `--input-tokens`/`--output-tokens`.
- `datasets`, `traces`: readers for prompt datasets and production traces (`files`: shared
  file reading).
- `text`, `tokenize`: prompt text of a length, shared prefixes, Mooncake block text, exact
  token counts with an optional tokenizer.
- `sources`: lazy per-request builders over all of the above.
- `prefix_cache`: the prefix-cache hit rate a trace's block ids imply.
"""
