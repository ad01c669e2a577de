"""A canary API key (env and --header) and URL credentials reach the server but no artifact."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.runs import invoke, invoke_report, only_run_dir, rows, run_args
from tests.security.artifacts import find_secret
from tests.servers.fault_server import FaultServer, FaultServerThread

KEY = "sk-CANARY-4f1c9e7a2b"
HEADER_SECRET = "hdr-CANARY-0d3e5b"
URL_PASSWORD = "pw-CANARY-77aa"
SECRETS = [KEY, HEADER_SECRET, URL_PASSWORD, "CANARY"]


def _run_and_report(base_url: str, tmp_path: Path, env: dict[str, str],
                    *extra: str) -> dict[str, str]:
    out = tmp_path / "out"
    ran = invoke(run_args(base_url, out, "--header", f"X-Team-Token: {HEADER_SECRET}",
                          *extra), env=env)
    assert ran.exit_code == 0, ran.stderr
    reported = invoke_report([str(out), "--out", str(tmp_path / "report")], env=env)
    assert reported.exit_code == 0, reported.stderr or repr(reported.exception)
    shown = invoke(["show", str(out), "--format", "json"], env=env)
    return {"run stdout": ran.stdout, "run stderr": ran.stderr, "report": reported.stdout
            + reported.stderr, "show": shown.stdout + shown.stderr}


@pytest.mark.slow
@pytest.mark.parametrize("env_name", ["OPENAI_API_KEY", "SERVECAP_API_KEY"])
def test_canary_key_reaches_server_but_no_artifact(env_name: str, tmp_path: Path) -> None:
    server = FaultServer(queue=["ok", "echo_secrets", "echo_secrets_in_stream", "ok"])
    with FaultServerThread(server) as thread:
        env = {"OPENAI_API_KEY": "", "SERVECAP_API_KEY": "", env_name: KEY}
        outputs = _run_and_report(thread.base_url, tmp_path, env, "--rounds", "4")
    sent = [h for h in server.seen_headers if "Authorization" in h]
    assert sent and all(h["Authorization"] == f"Bearer {KEY}" for h in sent)
    assert all(h.get("X-Team-Token") == HEADER_SECRET for h in server.seen_headers)
    stored = rows(only_run_dir(tmp_path / "out"))
    assert [r["reason"] for r in stored][1:3] == ["http_4xx", "server_error_in_stream"]
    assert find_secret(tmp_path, SECRETS, outputs) == []


@pytest.mark.slow
def test_url_credentials_sent_as_basic_auth_and_never_stored(tmp_path: Path) -> None:
    server = FaultServer(queue=["ok", "echo_secrets", "ok"])
    with FaultServerThread(server) as thread:
        url = thread.base_url.replace("http://", f"http://user:{URL_PASSWORD}@")
        env = {"OPENAI_API_KEY": "", "SERVECAP_API_KEY": ""}
        outputs = _run_and_report(url, tmp_path, env)
    auth = {h.get("Authorization", "") for h in server.seen_headers}
    assert auth and all(a.startswith("Basic ") for a in auth)
    assert find_secret(tmp_path, [*SECRETS, next(iter(auth))[6:]], outputs) == []


def test_url_credentials_and_api_key_refused(tmp_path: Path) -> None:
    server = FaultServer()
    with FaultServerThread(server) as thread:
        url = thread.base_url.replace("http://", f"http://user:{URL_PASSWORD}@")
        result = invoke(run_args(url, tmp_path / "out"), env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 2 and "use one of them" in result.stderr
    assert server.completions == 0
    assert find_secret(tmp_path, SECRETS, {"err": result.stderr + result.stdout}) == []


@pytest.mark.slow
def test_header_names_kept_values_dropped(tmp_path: Path) -> None:
    with FaultServerThread(FaultServer()) as thread:
        _run_and_report(thread.base_url, tmp_path, {"OPENAI_API_KEY": KEY})
    text = (only_run_dir(tmp_path / "out") / "run.json").read_text()
    assert "X-Team-Token" in text and HEADER_SECRET not in text
    assert "user:" not in text


def test_preflight_failure_message_has_no_secret(tmp_path: Path) -> None:
    server = FaultServer(models=[])
    with FaultServerThread(server) as thread:
        url = thread.base_url.replace("http://", f"http://user:{URL_PASSWORD}@")
        result = invoke(run_args(url, tmp_path / "out", "--header", f"X: {HEADER_SECRET}"),
                        env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 2
    assert find_secret(tmp_path, SECRETS, {"stderr": result.stderr,
                                           "stdout": result.stdout}) == []


HDR_TOKEN = "hdr-CANARY-777"


def test_a_header_token_echoed_without_its_scheme_is_redacted(tmp_path: Path) -> None:
    server = FaultServer(queue=["ok", "echo_token", "echo_token_in_stream", "ok"])
    with FaultServerThread(server) as thread:
        out = tmp_path / "out"
        env = {"OPENAI_API_KEY": "", "SERVECAP_API_KEY": ""}
        ran = invoke(run_args(thread.base_url, out, "--rounds", "4", "--header",
                              f"Authorization: Bearer {HDR_TOKEN}"), env=env)
    assert ran.exit_code == 0, ran.stderr
    stored = rows(only_run_dir(out))
    assert [r["reason"] for r in stored][1:3] == ["http_4xx", "server_error_in_stream"]
    assert "invalid token ***" in stored[1]["detail"]
    assert find_secret(tmp_path, [HDR_TOKEN], {"out": ran.stdout + ran.stderr}) == []


@pytest.mark.slow
def test_server_info_that_echoes_headers_is_redacted(tmp_path: Path) -> None:
    server = FaultServer(echo_info=True)
    with FaultServerThread(server) as thread:
        url = thread.base_url.replace("http://", f"http://user:{URL_PASSWORD}@")
        env = {"OPENAI_API_KEY": "", "SERVECAP_API_KEY": ""}
        outputs = _run_and_report(url, tmp_path, env)
    info = (only_run_dir(tmp_path / "out") / "run.json").read_text()
    assert "X-Team-Token" in info  # the echo is kept, its values masked
    auth = {h.get("Authorization", "") for h in server.seen_headers}
    basic = next(iter(auth))[6:]
    assert find_secret(tmp_path, [*SECRETS, basic, f"user:{URL_PASSWORD}"], outputs) == []


@pytest.mark.slow
def test_server_info_echo_of_the_api_key_is_redacted(tmp_path: Path) -> None:
    server = FaultServer(echo_info=True)
    with FaultServerThread(server) as thread:
        outputs = _run_and_report(thread.base_url, tmp_path, {"OPENAI_API_KEY": KEY})
    assert find_secret(tmp_path, SECRETS, outputs) == []


def test_a_redirect_is_a_failure_and_never_followed(tmp_path: Path) -> None:
    other = FaultServer()
    with FaultServerThread(other) as target:
        origin = target.base_url.replace("127.0.0.1", "localhost").removesuffix("/v1")
        server = FaultServer(default="redirect_307", redirect_to=origin)
        with FaultServerThread(server) as thread:
            ran = invoke(run_args(thread.base_url, tmp_path / "out", "--header",
                                  f"X-Team-Token: {HEADER_SECRET}"),
                         env={"OPENAI_API_KEY": KEY})
    assert ran.exit_code == 0, ran.stderr
    stored = rows(only_run_dir(tmp_path / "out"))
    assert [(r["reason"], r["http_status"]) for r in stored] == [("redirect", 307)] * 3
    assert other.completions == 0 and other.seen_headers == []  # nothing reached it


@pytest.mark.parametrize("url", [
    "http://user:pw/pw-CANARY-77aa@127.0.0.1:{port}/v1",
    "http://user:pw-CANARY-77aa@127.0.0.1:abc/v1",
    "http://user:pw#pw-CANARY-77aa@127.0.0.1:{port}/v1",
    "ftp://user:pw-CANARY-77aa@127.0.0.1/v1",
])
def test_a_bad_url_never_echoes_its_userinfo(url: str, tmp_path: Path) -> None:
    server = FaultServer()
    with FaultServerThread(server) as thread:
        result = invoke(run_args(url.format(port=thread.port), tmp_path / "out"))
    assert result.exit_code == 2 and result.exception is None, result.exception
    assert "Traceback" not in result.stderr
    assert server.completions == 0
    assert find_secret(tmp_path, SECRETS, {"err": result.stderr + result.stdout}) == []


def test_a_preflight_error_listing_echoed_models_is_redacted(tmp_path: Path) -> None:
    server = FaultServer(echo_info=True)
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out", "--model", "absent",
                                 "--header", f"X-Team-Token: {HEADER_SECRET}"),
                        env={"OPENAI_API_KEY": KEY})
    assert result.exit_code == 2 and "not served" in result.stderr
    assert find_secret(tmp_path, SECRETS, {"err": result.stderr + result.stdout}) == []


def test_metrics_labels_that_echo_headers_are_redacted(tmp_path: Path) -> None:
    """A `/metrics` whose labels echo every request header: the bearer token, a cookie, an
    `x-api-key`, a `--header` value and URL credentials reach it; `server_metrics.jsonl` and
    every other artifact show `***`."""
    server = FaultServer(echo_metrics=True)
    with FaultServerThread(server) as thread:
        url = thread.base_url.replace("http://", f"http://user:{URL_PASSWORD}@")
        out = tmp_path / "out"
        ran = invoke(run_args(url, out, "--header", f"Cookie: session={HEADER_SECRET}",
                              "--header", "x-api-key: xk-CANARY-91b2"),
                     env={"OPENAI_API_KEY": "", "SERVECAP_API_KEY": ""})
    assert ran.exit_code == 0, ran.stderr
    run_dir = only_run_dir(out)
    stored = (run_dir / "server_metrics.jsonl").read_text()
    assert "***" in stored and "vllm:num_requests_running" in stored
    auth = {h.get("Authorization", "") for h in server.seen_headers}
    found = find_secret(tmp_path, [*SECRETS, "xk-CANARY-91b2", next(iter(auth))[6:]],
                        {"out": ran.stdout + ran.stderr})
    assert found == []


def test_a_key_in_the_base_url_query_is_never_stored() -> None:
    from servecap.api.run.run_config import RunConfig
    from servecap.core.config import ClientOptions
    from servecap.core.secrets import Secrets, split_url_credentials

    url = f"http://127.0.0.1:9/v1?api-version=2&api-key={KEY}&Key={HEADER_SECRET}"
    client = ClientOptions(base_url=url)
    bare, secrets = split_url_credentials(client, Secrets())
    assert bare.base_url == url  # requests still carry it
    stored = str(RunConfig(client=bare, server_metrics=url).stored())
    assert KEY not in stored and HEADER_SECRET not in stored and "api-version=2" in stored
    assert secrets.redact(f"echo {KEY} {HEADER_SECRET}") == "echo *** ***"


def test_compare_never_stores_url_credentials(tmp_path: Path) -> None:
    server = FaultServer(default="ok")
    with FaultServerThread(server) as thread:
        url = thread.base_url.replace("http://", f"http://user:{URL_PASSWORD}@")
        result = invoke(["compare", "--target", f"a={url}", "--target", f"b={url}",
                         "--repeats", "1", "--concurrency", "1", "--rounds", "1",
                         "--warmup", "0", "--output-tokens", "4", "--input-tokens", "8",
                         "--out", str(tmp_path / "cmp")],
                        env={"OPENAI_API_KEY": "", "SERVECAP_API_KEY": ""})
    assert result.exit_code == 0, result.stderr + repr(result.exception)
    assert list((tmp_path / "cmp").rglob("comparison.json"))
    outputs = {"out": result.stdout + result.stderr}
    assert find_secret(tmp_path, SECRETS, outputs) == []
