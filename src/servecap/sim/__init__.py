"""servecap.sim: a simulated OpenAI-compatible inference server (an island package).

It imports nothing else of servecap. Modules: ``params`` and ``model`` (the performance
model in virtual time), ``sweep`` (closed-loop sweep without sockets), ``profiles``
(built-in and user profiles), ``fitting`` and ``calibrate`` (fit a profile to measured
means), ``server`` and ``runner`` (the HTTP server), ``cli`` (``servecap sim``).
"""

SIM_VERSION = "0.1.0"

__all__ = ["SIM_VERSION"]
