"""servecap.sim: a simulated OpenAI-compatible inference server (an island package).

It imports nothing else of servecap. Modules: ``params`` and ``model`` (the performance
model in virtual time), ``blocks`` and ``prefix_cache`` (prompts as block hashes, and the
KV budget with its prefix cache), ``fixed_engine`` (the deterministic profile's exact schedule),
``engines`` (which of the two a profile gets), ``engine_loop`` (the model in real time),
``sweep`` (closed-loop sweep without sockets), ``profiles`` (built-in and user profiles),
``fitting`` and ``calibrate`` (fit a profile to measured means), ``http11`` (HTTP/1.1 over
asyncio), ``wire`` (how bytes reach the sockets), ``server`` (the endpoints), ``runner``
(serve, thread, child process) and ``cli`` (``servecap sim``).
"""

SIM_VERSION = "0.1.0"

__all__ = ["SIM_VERSION"]
