"""What must never be stored or shown: the API key, `--header` values, URL credentials.

Sans-I/O apart from reading the key's environment variable once, in `Secrets.from_env`.
Every text that came from a server or from a URL passes `Secrets.redact` (or `redact_tree`
for JSON-like data) before it is stored or printed: servers echo request headers back in
error bodies, in-stream errors and self-descriptions (`/version`, `/v1/models`).
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from servecap.core.config import ClientOptions
from servecap.core.errors import bad_setting
from servecap.core.text import clean_text
from servecap.core.urls import secret_query_values, strip_credentials

API_KEY_FALLBACK_ENV = "SERVECAP_API_KEY"
MASK = "***"
MIN_SECRET_CHARS = 4  # shorter values would mask ordinary words ("ok", "1")

# An authorization-like value: a scheme word, then the credential (`Bearer abc`, `Basic ...`).
_SCHEME_VALUE = re.compile(r"^\s*[A-Za-z][A-Za-z0-9_-]*\s+(\S.*?)\s*$")


def credential_parts(value: str) -> list[str]:
    """A secret value and the pieces of it a server may echo on their own: the token after
    an auth scheme (`Bearer tok` -> `tok`), and for Basic the decoded `user:password` and
    the password."""
    parts = [value.strip()]
    match = _SCHEME_VALUE.match(value)
    if match is not None:
        token = match.group(1)
        parts.append(token)
        parts += _basic_parts(token) if value.strip().lower().startswith("basic") else []
    return [p for p in parts if len(p) >= MIN_SECRET_CHARS]


def _basic_parts(token: str) -> list[str]:
    try:
        pair = base64.b64decode(token, validate=True).decode("utf-8")
    except ValueError:
        return []
    _, sep, password = pair.partition(":")
    return [pair, password] if sep else [pair]


@dataclass
class Secrets:
    """The API key and extra header values of one run; `redact` masks every one of them."""

    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    also_redact: list[str] = field(default_factory=list)

    @classmethod
    def from_env(cls, env_name: str, headers: dict[str, str] | None = None) -> Secrets:
        key = os.environ.get(env_name) or os.environ.get(API_KEY_FALLBACK_ENV) or None
        return cls(api_key=key, headers=dict(headers or {}))

    def values(self) -> list[str]:
        """Every secret string, longest first (so a longer one is masked before its parts)."""
        raw = [*credential_parts(self.api_key or "")]
        for value in self.headers.values():
            raw += credential_parts(value)
        raw += [v for v in self.also_redact if len(v) >= MIN_SECRET_CHARS]
        return sorted(set(raw), key=len, reverse=True)

    def redact(self, text: str | None) -> str | None:
        """`text` (server-supplied, e.g. an error body) with every secret value masked and
        its control characters escaped (`clean_text`): it is about to be stored."""
        if not text:
            return text
        for value in self.values():
            text = text.replace(value, MASK)
        return clean_text(text)

    def redact_tree(self, data: Any) -> Any:
        """JSON-like `data` (server info) with every string, keys included, redacted."""
        if isinstance(data, dict):
            return {self.redact_tree(k): self.redact_tree(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.redact_tree(v) for v in data]
        if isinstance(data, str):
            return self.redact(data)
        return data

    def http_headers(self) -> dict[str, str]:
        out = dict(self.headers)
        if self.api_key:
            out["Authorization"] = f"Bearer {self.api_key}"
        return out


def split_url_credentials(
    client: ClientOptions, secrets: Secrets
) -> tuple[ClientOptions, Secrets]:
    """`http://user:pass@host/v1`: the password becomes a Basic Authorization header and the
    URL every request (and every error message) uses is bare. An API key as well is refused:
    both would set Authorization. A key in the query (`?api-key=...`) stays in the URL
    requests use and joins the values `redact` masks (stored URLs show it as `***`)."""
    in_query = secret_query_values(client.base_url)
    if in_query:
        secrets = Secrets(secrets.api_key, secrets.headers, [*secrets.also_redact, *in_query])
    parts = urlsplit(client.base_url)
    if parts.username is None and parts.password is None:
        return client, secrets
    if secrets.api_key:
        raise bad_setting("base_url", "carries user:password and an API key is set as well; "
                          "use one of them")
    password = unquote(parts.password or "")
    pair = f"{unquote(parts.username or '')}:{password}"
    token = base64.b64encode(pair.encode()).decode()
    headers = {"Authorization": f"Basic {token}", **secrets.headers}
    bare = client.model_copy(update={"base_url": strip_credentials(parts.geturl())})
    extra = [password, token, *secrets.also_redact]
    return bare, Secrets(None, headers, extra)
