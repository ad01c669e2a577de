"""Showing and storing URLs without their `user:password@` part or a key in their query."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit, urlunsplit

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


# Query parameters that carry a credential (`?api-key=`, `?key=`, `?access_token=`, `?sig=`):
# matched on the name with `-`/`_` removed, so every spelling is caught.
_SECRET_PARAM = re.compile(r"key|token|secret|pass|pwd|auth|sig|credential|session", re.I)


def secret_query_values(url: str) -> list[str]:
    """The values of `url`'s query parameters whose names say they hold a credential."""
    try:
        pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    except ValueError:
        return []
    return [v for k, v in pairs if v and _SECRET_PARAM.search(k.replace("-", "").replace("_", ""))]


def mask_query(url: str) -> str:
    """`url` with the value of every credential-like query parameter replaced by `***`."""
    base, sep, rest = url.partition("?")
    if not sep:
        return url
    query, hash_, fragment = rest.partition("#")
    items = []
    for item in query.split("&"):
        name, eq, _ = item.partition("=")
        secret = eq and _SECRET_PARAM.search(name.replace("-", "").replace("_", ""))
        items.append(f"{name}={MASK}" if secret else item)
    return base + "?" + "&".join(items) + hash_ + fragment


def public_url(url: str) -> str:
    """The URL as it may be stored or shown: no `user:password@`, no key in its query."""
    return mask_query(strip_credentials(url))


def strip_credentials(url: str) -> str:
    """The URL without `user:password@` (requests still use its query; see `public_url`)."""
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
