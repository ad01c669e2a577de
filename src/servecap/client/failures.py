"""Map what went wrong in a request to one of DESIGN's failure reasons."""

from __future__ import annotations

import ssl

import aiohttp

from servecap.core.records import RequestRecord


def reason_for_status(status: int) -> str:
    if status == 429:
        return "rate_limited"
    if 300 <= status < 400:
        return "redirect"
    return "http_5xx" if status >= 500 else "http_4xx"


def timeout_reason(responded: bool) -> str:
    """A read timeout: no response head yet, or a stream that stopped sending."""
    return "stream_stall" if responded else "header_timeout"


def reason_for_exception(exc: BaseException, responded: bool = False) -> str:
    """The failure reason of a transport exception; `responded`: a response byte arrived."""
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return "tls_verify_failed"
    if isinstance(exc, aiohttp.ClientConnectorSSLError):
        # a certificate the client refused, or no TLS at all (https to a plain HTTP port)
        verify = isinstance(exc.os_error, ssl.SSLCertVerificationError)
        return "tls_verify_failed" if verify else "tls_handshake_failed"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return "dns_error"
    if isinstance(exc, aiohttp.ClientConnectorError):
        refused = isinstance(exc.os_error, ConnectionRefusedError)
        return "connect_refused" if refused else "connect_error"
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return "connect_error"
    if isinstance(exc, TimeoutError):
        return timeout_reason(responded)
    if isinstance(exc, aiohttp.ClientPayloadError | aiohttp.ServerDisconnectedError
                  | aiohttp.ClientOSError):
        # written, then the connection ended: before any response byte the server hung up
        return "stream_truncated" if responded else "server_disconnected"
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
