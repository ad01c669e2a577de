"""What a server serves: its model ids from `GET /models`, for a front end's model picker."""

from __future__ import annotations

import asyncio

from servecap.client.http import make_session
from servecap.client.server_info import list_models
from servecap.core.config import ClientOptions, validate_base_url
from servecap.core.errors import UserInputError

LIST_TIMEOUT_S = 15.0


async def list_served_models_async(
    base_url: str, headers: dict[str, str] | None = None
) -> list[str]:
    """Model ids the server at `base_url` lists (a `UserInputError` when unreachable)."""
    if not base_url.strip():
        raise UserInputError("enter the server's base URL first")
    options = ClientOptions(base_url=validate_base_url(base_url), timeout_s=LIST_TIMEOUT_S)
    async with make_session(options, 1, headers or {}) as session:
        return await list_models(session, options)


def list_served_models(base_url: str, headers: dict[str, str] | None = None) -> list[str]:
    """`list_served_models_async` on a loop of its own (for synchronous front ends)."""
    return asyncio.run(list_served_models_async(base_url, headers))
