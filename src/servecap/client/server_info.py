"""Preflight: is the server there, which models does it serve, what does it say it is."""

from __future__ import annotations

import asyncio
import math
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from servecap.client.failures import describe_exception, reason_for_exception
from servecap.core import json_input
from servecap.core.config import ClientOptions, v1_hint
from servecap.core.errors import SettingError, UserInputError
from servecap.core.urls import hide_userinfo, public_url

# Endpoints engines use to describe themselves: vLLM, SGLang, llama.cpp, Ollama, the simulator.
INFO_PATHS: tuple[str, ...] = ("/version", "/get_server_info", "/props", "/api/version")
INFO_HEADERS: tuple[str, ...] = ("server", "x-served-by")


MODELS_LIMIT = 16 * 1024 * 1024  # bytes of a `/models` body read at most

def server_root(base_url: str) -> str:
    """`http://host:port/v1` -> `http://host:port` (engine info lives at the root)."""
    parts = urlsplit(base_url)
    path = parts.path[:-3] if parts.path.endswith("/v1") else parts.path
    return urlunsplit((parts.scheme, parts.netloc, path.rstrip("/"), "", ""))


async def read_at_most(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body up to `limit` bytes (`content.read(n)` may stop short of n before EOF)."""
    parts: list[bytes] = []
    size = 0
    while size < limit:
        part = await response.content.read(limit - size)
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


async def list_models(session: aiohttp.ClientSession, options: ClientOptions) -> list[str]:
    """Model ids from `GET /models`; an unreachable server is a user error (exit 2)."""
    url = options.base_url + "/models"
    shown = public_url(url)
    timeout = aiohttp.ClientTimeout(total=min(30.0, options.timeout_s))
    try:
        async with session.get(url, timeout=timeout, allow_redirects=False) as response:
            if 300 <= response.status < 400:
                target = hide_userinfo(response.headers.get("Location", "")[:200])
                raise SettingError(
                    f"{shown} answered HTTP {response.status}, a redirect to {target!r}; "
                    "servecap follows no redirects (they would carry {header} values to "
                    "another origin): use the final URL as {base_url}", "header", "base_url")
            if response.status >= 400:
                hint = v1_hint(options.base_url, response.status)
                raise UserInputError(f"{shown} answered HTTP {response.status}{hint}")
            body = await read_at_most(response, MODELS_LIMIT + 1)
            if len(body) > MODELS_LIMIT:
                raise ValueError(f"a model list over {MODELS_LIMIT} bytes")
            data = json_input.loads(body)  # bounded: nesting and size
    except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as exc:
        reason = reason_for_exception(exc)
        raise UserInputError(
            f"cannot reach server at {shown} ({reason}): {describe_exception(exc)}"
        ) from exc
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise UserInputError(f"{shown} did not return an OpenAI model list")
    # an id that is not text (`null`, a number) names no model: never run as "None"
    return [item["id"] for item in items
            if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]]


async def probe_server(
    session: aiohttp.ClientSession, options: ClientOptions
) -> dict[str, Any]:
    """What the server says about itself; every probe is optional and short."""
    root = server_root(options.base_url)
    info: dict[str, Any] = {}
    results = await asyncio.gather(
        *(_get_json(session, root + path) for path in INFO_PATHS), return_exceptions=True
    )
    for path, result in zip(INFO_PATHS, results, strict=True):
        if isinstance(result, tuple):
            body, headers = result
            if body is not None:
                info[path.lstrip("/")] = _trim(body)
            for name in INFO_HEADERS:
                if name in headers and f"header_{name}" not in info:
                    info[f"header_{name}"] = headers[name][:200]
    engine = detect_engine(info)
    if engine is not None:
        info["engine"] = engine
    return info


# Fields worth lifting out of each engine's self-description (name in body -> engine key).
_SGLANG_FIELDS = (
    "tp_size", "dp_size", "pp_size", "ep_size", "model_path", "served_model_name", "dtype",
    "kv_cache_dtype", "quantization", "context_length", "max_running_requests",
    "max_total_num_tokens", "chunked_prefill_size", "speculative_algorithm",
    "speculative_num_draft_tokens", "attention_backend", "schedule_policy",
)


def detect_engine(info: dict[str, Any]) -> dict[str, Any] | None:
    """Which engine answered, from the probe bodies: `{name, version, ...}` or None.

    Sans-I/O. llama-server's `/props`, SGLang's `/get_server_info`, the simulator's and
    vLLM's `/version`, Ollama's `/api/version`; the `server` header only as a last resort.
    """
    props, sgl, ver = info.get("props"), info.get("get_server_info"), info.get("version")
    if isinstance(props, dict) and ("build_info" in props or "total_slots" in props):
        return _llama_cpp(props)
    if isinstance(sgl, dict) and ("tp_size" in sgl or "model_path" in sgl):
        engine = {"name": "sglang", "version": sgl.get("version")}
        engine.update({k: sgl[k] for k in _SGLANG_FIELDS if sgl.get(k) is not None})
        return engine
    if isinstance(ver, dict) and ver.get("server") == "servecap-sim":
        return {"name": "servecap-sim", "version": ver.get("version"),
                "profile": ver.get("profile")}
    if isinstance(ver, dict) and isinstance(ver.get("version"), str):
        return {"name": "vllm", "version": ver["version"]}
    ollama = info.get("api/version")
    if isinstance(ollama, dict) and isinstance(ollama.get("version"), str):
        return {"name": "ollama", "version": ollama["version"]}
    header = info.get("header_server")
    if isinstance(header, str) and "llama" in header.lower():
        return {"name": "llama.cpp", "version": None}
    return None


def _llama_cpp(props: dict[str, Any]) -> dict[str, Any]:
    settings = props.get("default_generation_settings")
    settings = settings if isinstance(settings, dict) else {}
    engine: dict[str, Any] = {"name": "llama.cpp", "version": props.get("build_info")}
    for key, value in (
        ("model_path", props.get("model_path")),
        ("total_slots", props.get("total_slots")),
        ("n_ctx_per_slot", settings.get("n_ctx")),
    ):
        if value is not None:
            engine[key] = value
    return engine


async def _get_json(
    session: aiohttp.ClientSession, url: str
) -> tuple[Any | None, dict[str, str]]:
    timeout = aiohttp.ClientTimeout(total=3.0)
    async with session.get(url, timeout=timeout, allow_redirects=False) as response:
        headers = {k.lower(): v for k, v in response.headers.items()}
        if response.status != 200:
            return None, headers
        body = await read_at_most(response, 256 * 1024)
        try:
            return json_input.loads(body), headers
        except ValueError:
            return None, headers


def _trim(value: Any, depth: int = 0) -> Any:
    """Keep server info small and JSON-safe: strings cut, nesting bounded."""
    if depth > 4:
        return None
    if isinstance(value, dict):
        return {str(k)[:100]: _trim(v, depth + 1) for k, v in list(value.items())[:100]}
    if isinstance(value, list):
        return [_trim(v, depth + 1) for v in value[:50]]
    if isinstance(value, str):
        return value[:500]
    return value


class VersionFacts(NamedTuple):
    """What a run keeps from `/version`: the deployment, the simulator's time scale, and a
    note for each field that was there but could not be used."""

    deployment: dict[str, Any]
    time_scale: float | None
    notes: list[str]


def version_facts(version: Any) -> VersionFacts:
    """Server info is data: keep what parses, ignore the rest and say so (never raise)."""
    if not isinstance(version, dict):
        return VersionFacts({}, None, [])
    notes: list[str] = []
    deployment = version.get("deployment")
    if deployment is not None and not isinstance(deployment, dict):
        notes.append("ignored /version deployment: not a JSON object")
        deployment = None
    scale = version.get("time_scale")
    if scale is not None and not _positive_number(scale):
        notes.append("ignored /version time_scale: not a positive number")
        scale = None
    return VersionFacts(dict(deployment or {}), float(scale) if scale is not None else None, notes)


def _positive_number(value: Any) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    return math.isfinite(value) and value > 0
