"""servecap.sim: a simulated OpenAI-compatible inference server (an island package).

It imports nothing else of servecap, and the rest of servecap imports it only from here.
Three subpackages by job, plus the data they share:

- ``model``: the performance model in virtual time (parameters grouped by mechanism, the
  step engine, the closed-loop and users sweeps);
- ``server``: the model in real time behind HTTP/1.1, SSE and ``/metrics``;
- ``calibration``: fit a profile to measured levels, its held-out error, loose parameters;
- ``profiles``: built-in and user profiles (data with provenance), and ``cli``
  (``servecap sim``).

The names below load on first use, so ``servecap --help`` does not import the server.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from servecap.sim.calibration.calibrate import fit, guarded_ttft_ms, write_profile
    from servecap.sim.calibration.measured_levels import (
        CalibrationInputError,
        calibrated_workloads,
        read_levels,
    )
    from servecap.sim.cli import sim_app
    from servecap.sim.model.params import MECHANISMS, ModelParams
    from servecap.sim.model.sweep import DEFAULT_WORKLOAD, Request, closed_loop_requests
    from servecap.sim.model.users_sweep import UsersLevel, users_level
    from servecap.sim.profiles import (
        Profile,
        ProfileError,
        builtin_names,
        builtin_profile,
        load_profile,
        load_profile_file,
    )
    from servecap.sim.profiles.tomlout import profile_to_toml
    from servecap.sim.server.app import SIM_VERSION
    from servecap.sim.server.power import PowerModel
    from servecap.sim.server.runner import (
        SimProcessHandle,
        SimServerHandle,
        start_server_in_thread,
        start_server_process,
    )

#: public name -> the module that defines it
_WHERE = {
    "fit": "calibration.calibrate",
    "guarded_ttft_ms": "calibration.calibrate",
    "write_profile": "calibration.calibrate",
    "CalibrationInputError": "calibration.measured_levels",
    "calibrated_workloads": "calibration.measured_levels",
    "read_levels": "calibration.measured_levels",
    "sim_app": "cli",
    "MECHANISMS": "model.params",
    "ModelParams": "model.params",
    "DEFAULT_WORKLOAD": "model.sweep",
    "Request": "model.sweep",
    "closed_loop_requests": "model.sweep",
    "UsersLevel": "model.users_sweep",
    "users_level": "model.users_sweep",
    "Profile": "profiles",
    "ProfileError": "profiles",
    "builtin_names": "profiles",
    "builtin_profile": "profiles",
    "load_profile": "profiles",
    "load_profile_file": "profiles",
    "profile_to_toml": "profiles.tomlout",
    "SIM_VERSION": "server.app",
    "PowerModel": "server.power",
    "SimProcessHandle": "server.runner",
    "SimServerHandle": "server.runner",
    "start_server_in_thread": "server.runner",
    "start_server_process": "server.runner",
}

__all__ = [
    "DEFAULT_WORKLOAD",
    "MECHANISMS",
    "SIM_VERSION",
    "CalibrationInputError",
    "ModelParams",
    "PowerModel",
    "Profile",
    "ProfileError",
    "Request",
    "SimProcessHandle",
    "SimServerHandle",
    "UsersLevel",
    "builtin_names",
    "builtin_profile",
    "calibrated_workloads",
    "closed_loop_requests",
    "fit",
    "guarded_ttft_ms",
    "load_profile",
    "load_profile_file",
    "profile_to_toml",
    "read_levels",
    "sim_app",
    "start_server_in_thread",
    "start_server_process",
    "users_level",
    "write_profile",
]


def __getattr__(name: str) -> Any:
    """Load a public name's module on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value
