"""Redaction as pure functions: each secret's credential part, URLs that fail to parse."""

from __future__ import annotations

import base64

import pytest

from servecap.core.secrets import Secrets, credential_parts
from servecap.core.urls import hide_userinfo, strip_credentials


def test_the_credential_after_a_scheme_is_a_secret_of_its_own() -> None:
    secrets = Secrets(headers={"Authorization": "Bearer tok-12345", "X-Key": "plain-999"})
    text = "invalid token tok-12345; Bearer tok-12345; key plain-999"
    assert secrets.redact(text) == "invalid token ***; ***; key ***"


def test_basic_credentials_are_redacted_encoded_and_decoded() -> None:
    token = base64.b64encode(b"alice:s3cret-pw").decode()
    parts = credential_parts(f"Basic {token}")
    assert {token, "alice:s3cret-pw", "s3cret-pw"} <= set(parts)


def test_server_info_trees_are_redacted_keys_and_values() -> None:
    secrets = Secrets(api_key="sk-abcdef")
    info = {"headers": {"Authorization": "Bearer sk-abcdef", "sk-abcdef": ["x sk-abcdef"]}}
    assert "sk-abcdef" not in repr(secrets.redact_tree(info))


@pytest.mark.parametrize("url", [
    "http://user:pw/pw-SECRET@127.0.0.1:80/v1",
    "http://u:pw-SECRET@127.0.0.1:abc/v1",
    "http://u:p#w-SECRET@host/v1",
    "user:pw-SECRET@host",
    " https://a:b-SECRET@[::1]:8000/v1",
])
def test_no_part_of_userinfo_is_shown(url: str) -> None:
    assert "SECRET" not in hide_userinfo(url)
    assert "SECRET" not in strip_credentials(url)


def test_urls_without_userinfo_are_unchanged() -> None:
    assert hide_userinfo("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert strip_credentials("http://u:p@127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(("url", "shown"), [
    ("http://h/v1?api-key=SECRET", "http://h/v1?api-key=***"),
    ("http://u:SECRET@h:8/v1?key=SECRET&api-version=2#frag",
     "http://h:8/v1?key=***&api-version=2#frag"),
    ("http://h/v1?access_token=SECRET&X-Api-Key=SECRET&flag",
     "http://h/v1?access_token=***&X-Api-Key=***&flag"),
    ("http://h/v1?sig=SECRET&password=SECRET&model=m", "http://h/v1?sig=***&password=***&model=m"),
    ("http://h/v1", "http://h/v1"),
])
def test_public_url_masks_userinfo_and_query_keys(url: str, shown: str) -> None:
    from servecap.core.urls import public_url

    assert public_url(url) == shown
