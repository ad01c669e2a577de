"""Checks made before any load is sent: output dir, file limits, server, model."""

from __future__ import annotations

import resource
import shutil
import tempfile
from pathlib import Path
from typing import Any

import aiohttp

from servecap.api.run.run_config import RunConfig
from servecap.client.server_info import list_models, probe_server
from servecap.core.config import ClientOptions
from servecap.core.errors import SettingError, UserInputError
from servecap.core.secrets import Secrets
from servecap.storage.safe_files import DIR_MODE

MIN_FREE_BYTES = 16 * 1024 * 1024
FDS_PER_STREAM = 1
FD_HEADROOM = 64


def check_output_dir(out_dir: Path) -> None:
    """The output directory exists (or can be made), is writable and has room."""
    try:
        out_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)  # results are private
        with tempfile.NamedTemporaryFile(dir=out_dir, prefix=".servecap-write-test"):
            pass  # a fresh name (O_EXCL): never a link planted at a fixed one
    except OSError as exc:
        raise UserInputError(f"cannot write to output directory {out_dir}: {exc.strerror}") from exc
    free = shutil.disk_usage(out_dir).free
    if free < MIN_FREE_BYTES:
        raise UserInputError(f"output directory {out_dir} has only {free // 1024} KiB free")


def ensure_file_limit(max_concurrency: int) -> None:
    """Raise the soft open-file limit to fit the streams, or refuse before starting."""
    needed = max_concurrency * FDS_PER_STREAM + FD_HEADROOM
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise UserInputError(
            f"concurrency {max_concurrency} needs {needed} open files; the hard limit is {hard}"
            " (raise it with ulimit -n)"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


async def resolve_model(
    session: aiohttp.ClientSession, config: RunConfig
) -> tuple[str, list[str]]:
    """The model to use (the first served one unless named) and the server's list."""
    models = await list_models(session, config.client)
    if config.model is None:
        if not models:
            raise SettingError("the server lists no models; give the {model}", "model")
        return models[0], models
    if models and config.model not in models:
        shown = ", ".join(models[:10])
        raise UserInputError(f"model {config.model!r} is not served here (served: {shown})")
    return config.model, models


async def describe_server(
    session: aiohttp.ClientSession, options: ClientOptions, models: list[str]
) -> dict[str, Any]:
    """Server facts for run.json: models plus whatever the engine says about itself."""
    info: dict[str, Any] = {"models": models[:50]}
    info.update(await probe_server(session, options))
    return info


async def preflight(
    session: aiohttp.ClientSession, config: RunConfig, secrets: Secrets, label: str = ""
) -> tuple[str, dict[str, Any]]:
    """The model to send and the server's facts, both redacted (servers echo credentials);
    `label` ("target a: ") starts the message of a refusal."""
    try:
        model, models = await resolve_model(session, config)
    except UserInputError as exc:  # it may list what the server echoed back
        raise UserInputError(secrets.redact(f"{label}{exc}") or "preflight failed") from None
    server = secrets.redact_tree(await describe_server(session, config.client, models))
    return model, server
