"""How the simulator's bytes reach the sockets: straight with write(2), and held per engine step.

``Wire`` is one connection's way to its socket, ``WriteBatch`` holds every connection's writes
while the engine loop builds a step's chunks and sends them together. Both exist for speed:
the engine loop writes one chunk per stream per step, which at 1024 streams and 10 ms ITL is
about 100,000 writes a second on one core (``bench/sim_capacity.py``).
"""

from __future__ import annotations

import asyncio
import logging
import os

log = logging.getLogger(__name__)


class Wire:
    """One connection's way to its socket. Every byte of the connection goes through here.

    Bytes go straight to the socket with write(2) while the kernel takes them whole; from
    the first write it does not (a full socket buffer, a broken connection) on, they go
    through the transport, which queues, retries and reports errors. Once anything is
    queued there, everything after it is too, so the order holds. Why: uvloop's
    ``transport.write`` costs about 0.5-0.8 us more a call than write(2) itself (its
    buffer list, flow-control checks and fd lookup), and the engine loop makes one call per
    stream per step: at 1024 streams and 10 ms that is 5-8% of the core
    (``bench/sim_capacity.py``). Where there is no socket fd to write to, the transport
    does all the work."""

    __slots__ = ("_direct", "_fd", "transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        sock = transport.get_extra_info("socket")
        self._fd = sock.fileno() if sock is not None and os.name == "posix" else -1
        self._direct = self._fd >= 0

    def send(self, data: bytes) -> None:
        """Write ``data`` after everything sent before it."""
        if self._direct:
            try:
                sent = os.write(self._fd, data)
            except OSError:  # would block, or broke: the transport queues or reports it
                sent = 0
            if sent == len(data):
                return
            self._direct = False
            data = data[sent:]
        self.transport.write(data)

    def close(self) -> None:
        """Close once what the transport holds is written."""
        self.transport.close()


class WriteBatch:
    """While open, every connection's writes (and closes) wait here, in order, and go out
    together at ``flush``.

    Why: the engine loop batches the writes of one step. Built first and then written in one
    tight loop, neither the Python that builds chunks nor the kernel's socket path evicts the
    other's working set between writes, and the client wakes for a burst rather than a
    trickle: at 768 streams the simulator's kernel share fell from about 50% to 40% of a core
    and its step lateness from 0.7 to 0.1 ms (``bench/sim_capacity.py``, one A/B on a noisy
    2-core VM)."""

    def __init__(self) -> None:
        self.open = False
        self.pending: list[tuple[Wire, bytes | None]] = []  # None: close

    def begin(self) -> None:
        """Hold writes from now on."""
        self.open = True

    def write(self, wire: Wire, data: bytes) -> None:
        """``data`` to ``wire``: held while the batch is open, else sent now."""
        if self.open:
            self.pending.append((wire, data))
        else:
            wire.send(data)

    def close(self, wire: Wire) -> None:
        """Close ``wire`` after what it was sent: once the batch is flushed, else now."""
        if self.open:
            self.pending.append((wire, None))
        else:
            wire.close()

    def flush(self) -> None:
        """Send what was held, in order, and stop holding."""
        self.open = False
        pending, self.pending = self.pending, []
        for wire, data in pending:
            try:
                if data is None:
                    wire.close()
                else:
                    wire.send(data)
            except Exception:  # one broken connection must not keep the others' bytes
                log.exception("simulator: a held write failed")
