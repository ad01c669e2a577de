"""Map what went wrong in a request to one of DESIGN's failure reasons."""

from __future__ import annotations

import aiohttp

from servecap.core.records import RequestRecord


def reason_for_status(status: int) -> str:
    if status == 429:
        return "rate_limited"
    return "http_5xx" if status >= 500 else "http_4xx"


def reason_for_exception(exc: BaseException, record: RequestRecord) -> str:
    """The failure reason of a transport exception, given how far the request got."""
    if isinstance(exc, aiohttp.ClientConnectorCertificateError | aiohttp.ClientConnectorSSLError):
        return "tls_verify_failed"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return "dns_error"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return "connect_refused" if isinstance(exc.os_error, ConnectionRefusedError) else (
            "connect_error"
        )
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return "connect_error"
    if isinstance(exc, TimeoutError):
        return "header_timeout" if record.first_byte_at is None else "stream_stall"
    if isinstance(exc, aiohttp.ClientPayloadError | aiohttp.ServerDisconnectedError):
        return "stream_truncated" if record.first_byte_at is not None else "connect_error"
    if isinstance(exc, aiohttp.ClientOSError):
        return "stream_truncated" if record.first_byte_at is not None else "connect_error"
    return "client_error"


def describe_exception(exc: BaseException) -> str:
    """A short, secret-free description (exception type and message, no headers)."""
    text = str(exc).strip()
    name = type(exc).__name__
    return (f"{name}: {text}" if text else name)[:300]


def fail(record: RequestRecord, reason: str, detail: str | None = None) -> None:
    """Mark `record` failed once; the first reason wins."""
    if record.status == "ok":
        record.status = "failed"
        record.reason = reason
        record.detail = detail[:500] if detail else None
