"""L2: the HTTP + SSE client for OpenAI-compatible servers (meets `load.Backend`)."""
