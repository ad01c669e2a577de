"""The simulator as a server: the model in real time behind HTTP/1.1, SSE and ``/metrics``.

``http11`` and ``wire`` (HTTP/1.1 over asyncio, how bytes reach the sockets), ``openai``
and ``chunks`` (the OpenAI request and its SSE chunks), ``engine_loop`` (the model driven in
real time), ``metrics_text`` and ``histogram`` (``/metrics``), ``app`` (the endpoints) and
``runner`` (serve, a thread, a child process).
"""
