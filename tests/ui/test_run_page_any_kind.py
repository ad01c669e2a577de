"""The Run page starts any load kind by its text form, and refines C_max when asked."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from servecap.core.errors import UserInputError
from servecap.kinds.sessions import SessionsLoad
from servecap.ui.form import RunForm, build_config
from servecap.ui.labels import message_of
from servecap.ui.page_run import TEXT_MODE

pytestmark = pytest.mark.timeout(120)
URL = "http://127.0.0.1:8000/v1"


def test_the_form_builds_any_kind_from_its_text_and_a_cmax_search(tmp_path: Path) -> None:
    users = build_config(RunForm(base_url=URL, load_text="users=2, 4"), tmp_path).load_spec()
    assert isinstance(users, SessionsLoad) and users.users == [2, 4]
    closed = build_config(RunForm(base_url=URL, levels=[1, 4], find_cmax=True), tmp_path)
    assert closed.find_cmax is not None and closed.load is None
    with pytest.raises(UserInputError, match="invalid load 'speed=2'"):
        build_config(RunForm(base_url=URL, load_text="speed=2"), tmp_path)
    with pytest.raises(UserInputError, match="refine C_max"):
        build_config(RunForm(base_url=URL, load_text="users=2", find_cmax=True), tmp_path)
    with pytest.raises(UserInputError) as two:  # the api's rule, in the form's words
        build_config(RunForm(base_url=URL, load_text="users=2", rates="1"), tmp_path)
    assert message_of(two.value) == ("'Load' and 'Offered rates' are two load models; give "
                                     "one of them")


def test_text_mode_on_the_page_names_a_bad_load(app_factory: Any, tmp_path: Path) -> None:
    at = app_factory(tmp_path)
    at.radio(key="load_mode").set_value(TEXT_MODE).run()
    at.text_input(key="base_url").set_value(URL)
    at.text_input(key="load_text").set_value("bogus=1")
    at = at.button(key="start_run").click().run()
    assert not at.exception
    messages = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert any("invalid 'Load' 'bogus=1'" in m for m in messages), messages
    from servecap.ui.shared import run_manager

    assert run_manager().current is None
