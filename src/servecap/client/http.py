"""The streaming client: one aiohttp session per run, one pooled connection per stream.

Why aiohttp: bench/client_overhead.py measured it against httpx (several times the CPU per
stream) and was close enough to a raw-asyncio client to keep TLS, proxies, keep-alive and
chunked decoding in a well-kept library. The hot path stamps each read before parsing it.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from typing import Any

import aiohttp

from servecap.client.chunks import ChunkReader
from servecap.client.failures import (
    describe_exception,
    fail,
    reason_for_exception,
    reason_for_status,
    timeout_reason,
)
from servecap.client.pool import FreshConnector, SkipCount, current_skips
from servecap.client.stamp_age import received_age_ms, sent_age_ms, socket_of
from servecap.core.clock import now_ns
from servecap.core.config import ClientOptions, Endpoint
from servecap.core.errors import SSEProtocolError, UserInputError
from servecap.core.records import RequestRecord
from servecap.core.urls import hide_userinfo
from servecap.sse.decoder import SSEDecoder
from servecap.workload.source import AnyRequest

MAX_RESPONSE_BYTES = 64 * 1024 * 1024


def ssl_context(options: ClientOptions) -> ssl.SSLContext | bool:
    """TLS verification on unless `--insecure`; `--ca-bundle` trusts a private CA."""
    if options.insecure:
        return False
    if options.ca_bundle:
        try:
            return ssl.create_default_context(cafile=options.ca_bundle)
        except (OSError, ssl.SSLError) as exc:
            raise UserInputError(
                f"cannot use --ca-bundle {options.ca_bundle}: {exc.strerror or exc}"
            ) from exc
    return True


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
        self._session = session
        self._options = options
        self._chat = endpoint == "chat"
        # `--extra-body` may set max_tokens for every request; otherwise each request's own
        self._per_request_max = "max_tokens" not in (extra_body or {})
        path = "/chat/completions" if self._chat else "/completions"
        self._url = options.base_url + path
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
        self._timeout = aiohttp.ClientTimeout(
            total=None,
            sock_connect=options.connect_timeout_s,
            sock_read=options.stall_timeout_s,
        )

    def body(self, request: AnyRequest) -> bytes:
        body = dict(self._template)
        if self._per_request_max:
            body["max_tokens"] = request.max_tokens
        if self._chat:
            # a shared prefix arrives as its own system message, a dataset row as its turns
            body["messages"] = [{"role": m.role, "content": m.content} for m in request.messages]
        else:
            body["prompt"] = request.text
        return json.dumps(body).encode()

    async def send(self, request: AnyRequest, record: RequestRecord) -> None:
        """Send `request` once, record every timestamp; never raises for server faults."""
        payload = self.body(request)
        # a sessions turn collects its answer for the next turn's history
        reader = ChunkReader(record, self._chat, getattr(request, "answer", None))
        skips = SkipCount()
        token = current_skips.set(skips)  # the pool counts stale connections it skipped
        try:
            async with asyncio.timeout(self._options.timeout_s) as deadline:
                try:
                    await self._exchange(payload, reader)
                except TimeoutError:
                    if deadline.expired():
                        raise
                    fail(record, timeout_reason(record.first_byte_at is not None),
                         "read timed out")
        except TimeoutError:
            fail(record, "total_timeout", f"request exceeded {self._options.timeout_s:g} s")
        except asyncio.CancelledError:
            record.status, record.reason = "cancelled", "cancelled"
            raise
        except (aiohttp.ClientError, OSError) as exc:
            responded = record.first_byte_at is not None
            fail(record, reason_for_exception(exc, responded), describe_exception(exc))
        except SSEProtocolError as exc:
            fail(record, "response_too_large", str(exc))
        finally:
            current_skips.reset(token)
            record.reconnects = skips.skipped
            record.ended_at = now_ns()
            reader.finish(len(request.text))

    async def _exchange(self, payload: bytes, reader: ChunkReader) -> None:
        """One attempt, never repeated: the pool hands out only connections that were
        open just before the write (client/pool.py), so a failure here is the server's."""
        record = reader.record
        record.sent_at = now_ns()
        async with self._session.post(
            self._url,
            data=payload,
            headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
            timeout=self._timeout,
            allow_redirects=False,  # a redirect is a failure: never measure another origin
        ) as response:
            record.first_byte_at = now_ns()
            sent_age = sent_age_ms(socket_of(response))
            if sent_age is not None:
                # the request left the machine at first_byte_at - sent_age; later than
                # sent_at by the client's own delay in writing it
                waited = (record.first_byte_at - record.sent_at) / 1e6 - sent_age
                record.client_delay_ms = max(0.0, waited)
            record.http_status = response.status
            if not await self._response_ok(response, record):
                return
            await self._read_stream(response, reader)

    async def _response_ok(self, response: aiohttp.ClientResponse, record: RequestRecord) -> bool:
        if 300 <= response.status < 400:
            target = hide_userinfo(response.headers.get("Location", "")[:200])
            fail(record, "redirect", f"HTTP {response.status} to {target!r}: not followed")
            return False
        if response.status >= 400:
            body = await response.content.read(2048)
            detail = body.decode("utf-8", errors="replace")
            retry = response.headers.get("Retry-After")
            if retry:
                detail = f"Retry-After: {retry[:40]}; {detail}"
            fail(record, reason_for_status(response.status), detail)
            return False
        content_type = response.headers.get("Content-Type", "")
        if "text/event-stream" not in content_type:
            body = await response.content.read(512)
            snippet = body.decode("utf-8", errors="replace")
            fail(record, "unexpected_content_type", f"{content_type[:80]}: {snippet}")
            return False
        return True

    async def _read_stream(self, response: aiohttp.ClientResponse, reader: ChunkReader) -> None:
        decoder = SSEDecoder()
        record = reader.record
        received = 0
        content = response.content
        sock = socket_of(response)
        first_age: float | None = None
        try:
            while True:
                data = await content.readany()
                arrived_at = now_ns()  # stamped before any parsing
                if not data:
                    _add_read_delay(record, first_age, received_age_ms(sock))
                    break
                received += len(data)
                if received > MAX_RESPONSE_BYTES:
                    fail(record, "response_too_large", f"over {MAX_RESPONSE_BYTES} bytes")
                    return
                before = record.first_token_at
                for event, text in decoder.feed(data):
                    reader.feed(event, text, arrived_at)
                if before is None and record.first_token_at is not None:
                    # one syscall a request: how old the first token's bytes were when stamped
                    first_age = received_age_ms(sock)
                if record.status != "ok":
                    return  # keep reading after [DONE] so the connection is reused
            for event, text in decoder.close():
                reader.feed(event, text, now_ns())
        finally:
            record.utf8_replaced = decoder.replaced


def _add_read_delay(record: RequestRecord, *ages_ms: float | None) -> None:
    """client_delay_ms: the send delay plus the larger of the read stamps' ages (first
    token, end of stream), so that it bounds the client's share of TTFT and of latency."""
    ages = [a for a in ages_ms if a is not None]
    if ages:
        record.client_delay_ms = (record.client_delay_ms or 0.0) + max(ages)
