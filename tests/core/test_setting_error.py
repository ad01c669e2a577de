"""Errors name settings, and each front end says them in its own words: the CLI its flags,
the app its labels, the api the setting's plain name."""

from __future__ import annotations

import pytest

from servecap.cli.common import flag_of
from servecap.core.config import parse_levels
from servecap.core.errors import SettingError, UserInputError, bad_setting, said
from servecap.ui.labels import label_of, message_of


def test_a_setting_is_named_by_whoever_shows_it() -> None:
    exc = bad_setting("trace_speed", "'0': expected a number > 0", "invalid ")
    assert str(exc) == "invalid trace speed '0': expected a number > 0"
    assert exc.named(flag_of) == "invalid --trace-speed '0': expected a number > 0"
    assert message_of(exc) == "invalid 'Trace speeds' '0': expected a number > 0"
    assert isinstance(exc, UserInputError)  # exit 2 in every front end


def test_two_settings_and_a_value_that_looks_like_one() -> None:
    exc = SettingError("{rate} '{rate}' for {duration} is too long", "rate", "duration")
    assert exc.named(flag_of) == "--rate '{rate}' for --duration is too long"


def test_flags_that_are_not_the_setting_with_dashes() -> None:
    assert flag_of("statistic") == "--stat" and flag_of("base_url") == "--base-url"
    assert label_of("think_time") == "'Think time'" and label_of("seed") == "'seed'"


def test_a_plain_error_is_said_as_it_is() -> None:
    assert said(UserInputError("no such run"), flag_of) == "no such run"


def test_a_parser_names_the_setting_it_was_given() -> None:
    with pytest.raises(SettingError) as caught:
        parse_levels("1,,2", "users")
    assert caught.value.settings == ("users",)
    assert caught.value.named(flag_of).startswith("invalid --users '1,,2'")
