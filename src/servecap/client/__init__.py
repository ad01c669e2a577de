"""L2: the HTTP + SSE client for OpenAI-compatible servers (meets `kinds.io.Backend`)."""
