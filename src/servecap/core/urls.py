"""Showing and storing URLs without their `user:password@` part."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
# `scheme://` then everything up to the last `@` is userinfo. Found by hand, not by urlsplit,
# so a URL that fails to parse (an unencoded `/` or `#` in the password, a bad port) still
# never shows any part of it; an `@` later in a path is masked too, which only hides more.
_SCHEME = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*://")


def hide_userinfo(url: str) -> str:
    """`url` with any `user:password@` replaced by `***@`; never fails, never parses ports."""
    match = _SCHEME.match(url)
    start = match.end() if match is not None else 0
    at = url.rfind("@", start)
    if at < 0:
        return url
    return url[:start] + MASK + url[at:]


def strip_credentials(url: str) -> str:
    """The URL without `user:password@`, so it can be stored and shown."""
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port == -1 or parts.scheme not in ("http", "https"):
        return hide_userinfo(url)  # no URL requests can use: masked, whatever it holds
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
