"""What each request carries beside the prompt: extra headers and extra body fields, parsed
and checked once for every front end (errors name the setting: `header`, `extra_body`)."""

from __future__ import annotations

import re
from typing import Any

from servecap.core import json_input
from servecap.core.errors import SettingError, bad_setting
from servecap.core.text import printable

# RFC 9110 field names are tokens; a space or colon in one would be sent as another header
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
# body keys servecap itself sets per request: overriding them breaks every request
# (`"stream": false` gets JSON, not a stream) or the measurement (`max_tokens`, `model`)
# (why, the setting to use instead, if any)
OWNED_BODY_KEYS: dict[str, tuple[str, str | None]] = {
    "stream": ("servecap always streams", None),
    "model": ("use {model}", "model"),
    "max_tokens": ("use {output_tokens}", "output_tokens"),
    "messages": ("servecap builds the prompt ({input_tokens})", "input_tokens"),
    "prompt": ("servecap builds the prompt ({input_tokens})", "input_tokens"),
}


def parse_headers(values: list[str]) -> dict[str, str]:
    """`Name: value` items as headers; a malformed name or a line break is refused."""
    headers = {}
    for item in values:
        name, sep, value = item.partition(":")
        name = name.strip()
        if not sep or not name:
            raise bad_setting("header", f"{name!r}: expected 'Name: value'", "invalid ")
        if not _HEADER_NAME.match(name):
            raise SettingError(f"invalid {{header}} name {printable(name)!r}: letters, digits "
                               "and !#$%&'*+-.^_`|~ only", "header")
        if any(ch in value for ch in "\r\n\x00"):
            raise bad_setting("header", f"{name!r}: the value has a line break", "invalid ")
        headers[name] = value.strip()
    return headers


def parse_extra_body(text: str | None) -> dict[str, Any]:
    """A JSON object merged into every request body; keys servecap sets itself refused."""
    if not text:
        return {}
    try:
        value = json_input.loads(text)  # no NaN: a request body must be JSON
    except ValueError as exc:
        raise bad_setting("extra_body", f"is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise bad_setting("extra_body", "must be a JSON object, e.g. '{\"ignore_eos\": true}'")
    owned = [key for key in value if key in OWNED_BODY_KEYS]
    if owned:
        why, instead = OWNED_BODY_KEYS[owned[0]]
        settings = ("extra_body", instead) if instead else ("extra_body",)
        raise SettingError(f"{{extra_body}} may not set {owned[0]!r}: {why}", *settings)
    return value
