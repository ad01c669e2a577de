"""The "Try it" simulator: one built-in profile served on loopback for the whole process."""

from __future__ import annotations

import atexit
import threading
from typing import Any

# Preferred profiles, first available wins. Real time (x1), so Try-it's numbers read as
# real seconds; the page states the scale on the button and when the simulator starts. The
# run's client is a child process (`ui.run_child`): inside the Streamlit process, at 2x,
# its loop lagged enough to flag its own c=1 level client-bound.
TRY_PROFILES: tuple[str, ...] = ("vllm-direct", "deterministic")
TRY_TIME_SCALE = 1.0


class SimHolder:
    """Starts the simulator once (on 127.0.0.1, a free port) and hands out its URL."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._handle: Any = None
        self.profile = ""
        self.time_scale = TRY_TIME_SCALE

    def base_url(self) -> str:
        """The running simulator's base URL, starting it on first use."""
        with self._lock:
            if self._handle is None:
                self._handle, self.profile = _start()
            return str(self._handle.base_url)

    def stop(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.stop()
                self._handle = None


def _start() -> tuple[Any, str]:
    try:
        from servecap.sim import builtin_names, start_server_process
    except ImportError as exc:  # the [sim]/[ui] extra brings httptools
        raise RuntimeError(f"the simulator needs servecap[ui] installed ({exc.name})") from exc
    names = builtin_names()
    name = next((n for n in TRY_PROFILES if n in names), names[0])
    handle = start_server_process(name, host="127.0.0.1", port=0, time_scale=TRY_TIME_SCALE)
    atexit.register(handle.stop)  # never leave the child running after the app exits
    return handle, name
