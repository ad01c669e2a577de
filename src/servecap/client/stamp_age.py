"""How late the client's own stamps are, from the kernel's clock of the socket.

TTFT is first_token_at - sent_at, both client stamps: sent_at when the request went
to the kernel, first_token_at when the loop read the token's bytes (client.wire). On a
loaded machine the read still drifts (the bytes wait in the kernel until the loop, or a
core, gets to them), and that delay is counted as server latency while neither the
loop-lag probe nor the CPU share need notice.
Linux keeps, per TCP socket, when data was last sent and received (`tcp_info`, in jiffies):
read at a stamp, it says how old the event already was. Later traffic makes it read low, so
it is a lower bound, at the kernel tick's resolution (1-10 ms): it counts in a level's mean.
"""

from __future__ import annotations

import socket
import struct
from typing import Any

_TCP_INFO = getattr(socket, "TCP_INFO", None)  # Linux only
_LAST_DATA_SENT = 44  # offsets in struct tcp_info of tcpi_last_data_sent and _recv (ms)
_LAST_DATA_RECV = 52
_SIZE = 104


def received_age_ms(sock: Any | None) -> float | None:
    """Milliseconds since the kernel last received data on `sock`; None where unknown."""
    return _age_ms(sock, _LAST_DATA_RECV)


def sent_age_ms(sock: Any | None) -> float | None:
    """Milliseconds since the kernel last sent data on `sock`; None where unknown."""
    return _age_ms(sock, _LAST_DATA_SENT)


def _age_ms(sock: Any | None, offset: int) -> float | None:
    if sock is None or _TCP_INFO is None:
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, _SIZE)
    except (OSError, AttributeError, TypeError):
        return None
    if len(info) < offset + 4:
        return None
    return float(struct.unpack_from("I", info, offset)[0])
