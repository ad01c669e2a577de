"""The app's prefix-cache settings and table: the Run page takes the hit rate and the reset
(refusing a bad reset before any load), the form builds them into the run's config, and the
Results page shows a run's prefix cache per level (a real run on the simulator)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.core.errors import UserInputError
from servecap.core.workload_spec import WorkloadSpec
from servecap.sim.server.runner import SimProcessHandle, start_server_process
from servecap.ui.form import RunForm, build_config
from tests.api.test_prefix_cache_run import PROFILE

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def caching_sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimProcessHandle]:
    path = tmp_path_factory.mktemp("prefix-ui") / "prefix-run.toml"
    path.write_text(PROFILE, encoding="utf-8")
    with start_server_process(str(path)) as handle:
        yield handle


def test_the_form_builds_both_settings(tmp_path: Path) -> None:
    form = RunForm(base_url="http://127.0.0.1:9/v1", input_tokens=1000, prefix_hit_rate=0.6,
                   reset_prefix_cache="auto")
    config = build_config(form, tmp_path)
    assert config.workload is not None and config.workload.prefix_hit_rate == 0.6
    assert config.reset_prefix_cache == "auto"
    plain = build_config(RunForm(base_url="http://127.0.0.1:9/v1"), tmp_path)
    assert plain.workload is None and plain.reset_prefix_cache == "off"
    with pytest.raises(UserInputError, match="prefix-cache reset: expected auto, off or"):
        build_config(RunForm(base_url="http://127.0.0.1:9/v1", reset_prefix_cache="nope"),
                     tmp_path)


def test_the_run_page_refuses_a_bad_reset_url(app_factory: Any, tmp_path: Path) -> None:
    at = app_factory(tmp_path)
    at.text_input(key="base_url").set_value("http://127.0.0.1:9/v1")
    at = at.checkbox(key="prefix_built").check().run()
    at.number_input(key="prefix_hit_rate").set_value(0.6)
    at = at.radio(key="reset_mode").set_value("URL").run()
    at.text_input(key="reset_url").set_value("not a url")
    at = at.button(key="start_run").click().run()
    shown = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert any("Not started" in e and "prefix-cache reset" in e for e in shown), shown
    assert not any(p.is_dir() for p in tmp_path.iterdir())  # nothing ran, nothing saved


@pytest.mark.slow
def test_the_results_page_shows_the_prefix_cache(app_factory: Any, tmp_path: Path,
                                                 caching_sim: SimProcessHandle) -> None:
    config = RunConfig(
        name="cached", concurrency=[2], rounds=3, input_tokens=512, output_tokens=4,
        out_dir=str(tmp_path), client=ClientOptions(base_url=caching_sim.base_url),
        workload=WorkloadSpec(prefix_hit_rate=0.5), reset_prefix_cache="auto",
    )
    run_benchmark(config, Secrets())
    at = app_factory(tmp_path)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    assert not at.exception
    titles = [m.value for m in at.markdown]
    assert any("the prefix cache per level" in t for t in titles), titles
    frames = [f.value for f in at.dataframe]
    prefix = next(f for f in frames if "served by usage %" in f.columns)
    assert list(prefix["reset"]) == ["done"] and list(prefix["built for %"]) == ["50.0"]
