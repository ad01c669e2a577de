"""L3: run directories on disk: `run.json`, `requests.jsonl`, `summary.json`, `summary.csv`."""
