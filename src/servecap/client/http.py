"""The streaming client: one keep-alive connection per stream, its own HTTP/1.1 on asyncio.

The run's aiohttp session (`make_session`) serves the preflight, the server facts and the
metrics scraper; the streams go through `client.wire`, a small HTTP/1.1 client on an
asyncio Protocol parsed by httptools. Why (bench/client_overhead.py, in one run beside a
raw-asyncio client): with aiohttp a closed loop's burst made each new request wait inside
the client while the other streams' endings were processed, all of it counted as TTFT, and
each chunk was stamped when its task resumed. Here a request is written the moment its
stream asks (`sent_at` is when it goes to the kernel), each chunk is stamped
and parsed in the loop's read callback, and one stream costs no task wake-up per chunk.
TLS, keep-alive, chunked and close-delimited bodies, gzip, the reconnect rule and every
failure reason are kept (tests/faults, tests/client).
"""

from __future__ import annotations

import asyncio
import json
import ssl
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from servecap.client.chunks import ChunkReader
from servecap.client.exchange import Exchange
from servecap.client.failures import fail
from servecap.client.pool import ConnectFailed, FreshConnector, SkipCount, StreamPool
from servecap.client.wire import Connection
from servecap.core.clock import now_ns, sleep_until
from servecap.core.config import ClientOptions, Endpoint
from servecap.core.errors import SettingError, UserInputError
from servecap.core.records import RequestRecord
from servecap.workload.source import AnyRequest
from servecap.workload.tools import ToolTurn, turn_json


def ssl_context(options: ClientOptions) -> ssl.SSLContext | bool:
    """TLS verification on unless `--insecure`; `--ca-bundle` trusts a private CA."""
    if options.insecure:
        return False
    if options.ca_bundle:
        try:
            return ssl.create_default_context(cafile=options.ca_bundle)
        except (OSError, ssl.SSLError) as exc:
            raise SettingError(f"cannot use {{ca_bundle}} {options.ca_bundle}: "
                               f"{exc.strerror or exc}", "ca_bundle") from exc
    return True


def stream_tls(options: ClientOptions) -> ssl.SSLContext:
    """The streams' TLS context: `ssl_context`'s rule as one SSLContext."""
    context = ssl_context(options)
    if isinstance(context, ssl.SSLContext):
        return context
    if context:
        return ssl.create_default_context()
    unverified = ssl.create_default_context()
    unverified.check_hostname = False
    unverified.verify_mode = ssl.CERT_NONE
    return unverified


def make_session(
    options: ClientOptions, pool_size: int, headers: dict[str, str]
) -> aiohttp.ClientSession:
    """A session whose pool holds one connection per stream (no hidden cap at 100)."""
    connector = FreshConnector(
        limit=max(1, pool_size), limit_per_host=0, ssl=ssl_context(options), ttl_dns_cache=300
    )
    return aiohttp.ClientSession(
        connector=connector,
        headers=headers,
        auto_decompress=True,
        trust_env=False,
    )


class StreamingClient:
    """Sends one streamed completion per call and fills its RequestRecord (meets Backend)."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        options: ClientOptions,
        model: str,
        endpoint: Endpoint,
        max_tokens: int,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self._options = options
        self._chat = endpoint == "chat"
        # `--extra-body` may set max_tokens for every request; otherwise each request's own
        self._per_request_max = "max_tokens" not in (extra_body or {})
        extra = dict(extra_body or {})
        user_stream = extra.pop("stream_options", None)
        self._template: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "stream": True,
            **extra,
            # usage is how tokens are counted: a user's stream_options add to it
            "stream_options": {
                "include_usage": True, **(user_stream if isinstance(user_stream, dict) else {}),
            },
        }
        url = urlsplit(options.base_url)
        path = url.path.rstrip("/") + ("/chat/completions" if self._chat else "/completions")
        # the session's default headers (credentials, --header) go on every request
        self._head = request_head(path, url, dict(getattr(session, "headers", None) or {}))
        self._session = session
        self._streams: StreamPool | None = None  # opened with the first request

    def body(self, request: AnyRequest) -> bytes:
        body = dict(self._template)
        if self._per_request_max:
            body["max_tokens"] = request.max_tokens
        if self._chat:
            # a shared prefix arrives as its own system message, a dataset row as its turns
            body["messages"] = [
                turn_json(m) if isinstance(m, ToolTurn) else {"role": m.role, "content": m.content}
                for m in request.messages
            ]
            tools = getattr(request, "tools", None)
            if tools:  # an agent's call: its catalogue and whether a tool may be called
                body["tools"] = list(tools)
                body["tool_choice"] = getattr(request, "tool_choice", None) or "auto"
        else:
            body["prompt"] = request.text
        return json.dumps(body).encode()

    async def send(
        self, request: AnyRequest, record: RequestRecord, at_ns: int | None = None
    ) -> None:
        """Send `request` once, record every timestamp; never raises for server faults.
        With `at_ns` the body is built and a connection taken first, and the request is
        written at `at_ns` (never before): its send lateness is the write alone."""
        payload = self.body(request)
        wire = self._head % len(payload) + payload
        # a sessions turn collects its answer for the next turn's history, an agent's call
        # its tool calls too
        reader = ChunkReader(record, self._chat, getattr(request, "answer", None),
                             getattr(request, "tool_log", None))
        skips = SkipCount()
        connection = exchange = None
        try:
            async with asyncio.timeout(self._options.timeout_s):
                if self._streams is None:
                    self._streams = _stream_pool(self._session, self._options)
                connection = await self._streams.acquire(skips)
                if at_ns is not None:
                    connection = await self._at(at_ns, connection, skips)
                if connection.connect_ns is not None:
                    record.connect_ms, connection.connect_ns = connection.connect_ns / 1e6, None
                done = asyncio.get_running_loop().create_future()
                exchange = Exchange(reader, done, connection.socket)
                connection.start(wire, exchange, self._options.stall_timeout_s)
                await done
        except TimeoutError:
            fail(record, "total_timeout", f"request exceeded {self._options.timeout_s:g} s")
        except ConnectFailed as exc:
            fail(record, exc.reason, str(exc))
        except asyncio.CancelledError:
            record.status, record.reason = "cancelled", "cancelled"
            raise
        finally:
            if connection is not None and not (exchange is not None and exchange.finished):
                connection.abort()  # cut short (a timeout, a cancel): never reused
            record.reconnects = skips.skipped
            if record.ended_at is None:
                record.ended_at = now_ns()
            reader.finish(len(request.text))

    async def _at(self, at_ns: int, connection: Connection, skips: SkipCount) -> Connection:
        """Wait for `at_ns` holding `connection`; one the server closed meanwhile (the loop
        saw it go) is replaced, so a request is still written only to an open socket."""
        await sleep_until(at_ns)
        while connection.closed:
            assert self._streams is not None
            connection = await self._streams.acquire(skips)
        return connection


def request_head(path: str, url: Any, headers: dict[str, str]) -> bytes:
    """The request line and headers, with `%d` where the body's length goes."""
    default_port = 443 if url.scheme == "https" else 80
    host = url.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    if url.port and url.port != default_port:
        host += f":{url.port}"
    fixed = {
        "Host": host, "User-Agent": "servecap", "Accept": "text/event-stream",
        "Accept-Encoding": "identity", "Content-Type": "application/json",
    }
    lines = [f"POST {path} HTTP/1.1"]
    seen = {k.lower() for k in headers}
    lines += [f"{k}: {v}" for k, v in fixed.items() if k.lower() not in seen or k == "Host"]
    for name, value in headers.items():
        if name.lower() in ("host", "content-length", "transfer-encoding", "connection"):
            continue
        if any(c in name + value for c in "\r\n\0"):
            raise UserInputError(f"header {name[:40]!r} holds a line break")
        lines.append(f"{name}: {value}")
    head = "\r\n".join(lines).replace("%", "%%") + "\r\nContent-Length: %d\r\n\r\n"
    return head.encode("latin-1")


def _stream_pool(session: aiohttp.ClientSession, options: ClientOptions) -> StreamPool:
    """The session's stream pool (one per session, closed with it)."""
    connector = session.connector
    pool = getattr(connector, "streams", None)
    if isinstance(pool, StreamPool):
        return pool
    url = urlsplit(options.base_url)
    https = url.scheme == "https"
    pool = StreamPool(
        url.hostname or "", url.port or (443 if https else 80),
        stream_tls(options) if https else None, options.connect_timeout_s,
    )
    if isinstance(connector, FreshConnector):
        connector.streams = pool
    return pool
