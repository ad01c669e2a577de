"""Emptying a server's prefix cache before a level (`--reset-prefix-cache auto|off|URL`).

The engines' endpoints: vLLM `POST /reset_prefix_cache` (served only with
`VLLM_SERVER_DEV_MODE=1`), SGLang `POST /flush_cache` (refused while requests run), the
simulator both. `reset_target` decides the URL from the setting and the engine preflight
detected (sans-I/O); `reset_prefix_cache` posts to it within `RESET_TIMEOUT_S` and returns
what happened as text. A reset never fails a run: its failure is the level's warning, and
the bounded timeout keeps a dead endpoint from holding a level back for long.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp

from servecap.client.failures import describe_exception
from servecap.client.http import ssl_context
from servecap.client.server_info import server_root
from servecap.core.config import ClientOptions
from servecap.core.urls import public_url

# the reset endpoint of each engine `server_info.detect_engine` names
RESET_PATHS: dict[str, str] = {
    "vllm": "/reset_prefix_cache",
    "sglang": "/flush_cache",
    "servecap-sim": "/reset_prefix_cache",
}
# a reset is a cheap call on an idle server; longer means something is wrong with it
RESET_TIMEOUT_S = 5.0
DONE = "done"


@dataclass(frozen=True, slots=True)
class ResetTarget:
    """Where a run resets the prefix cache (None: it does not) and why, for run.json."""

    url: str | None
    note: str


def reset_target(setting: str, base_url: str, engine: str | None) -> ResetTarget:
    """The reset a run makes: `off`, an explicit URL, or `auto` by the detected engine."""
    if setting == "off":
        return ResetTarget(None, "off")
    if setting != "auto":
        return ResetTarget(setting, f"POST {public_url(setting)} (given)")
    path = RESET_PATHS.get(engine or "")
    if path is None:
        known = ", ".join(sorted(RESET_PATHS))
        return ResetTarget(None, f"auto: no reset, the server ({engine or 'engine unknown'}) "
                                 f"has no known reset endpoint ({known} do)")
    url = server_root(base_url) + path
    return ResetTarget(url, f"auto: POST {public_url(url)} ({engine})")


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port


async def reset_prefix_cache(
    url: str, options: ClientOptions, headers: dict[str, str],
    timeout_s: float = RESET_TIMEOUT_S,
) -> str:
    """POST the reset; `DONE`, or `failed: why` (an HTTP status or the connection error).

    Its own short-lived session, so the level's connection pool is left as it was; the
    run's headers (an API key) go only to the origin of `--base-url`, never elsewhere."""
    own = _origin(url) == _origin(options.base_url)
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    connector = aiohttp.TCPConnector(limit=1, ssl=ssl_context(options))
    try:
        async with (
            aiohttp.ClientSession(connector=connector, headers=headers if own else {},
                                  trust_env=False) as session,
            session.post(url, timeout=timeout, allow_redirects=False) as response,
        ):
            await response.content.read(4096)  # a short answer; the rest is not ours to read
            if 200 <= response.status < 300:
                return DONE
            return f"failed: HTTP {response.status} from {public_url(url)}"
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        return f"failed: {describe_exception(exc)[:160]} ({public_url(url)})"
