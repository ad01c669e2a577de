"""`servecap capacity` by its load: the concurrency search (`capacity`), the open-loop
rate's (`rate_capacity`) or the agents' (`agents_capacity`). The two newer searches build on
the concurrency search's options, watch and verification, so the choice lives above all
three."""

from __future__ import annotations

from servecap.api.capacity.agents_capacity import find_agents_capacity
from servecap.api.capacity.capacity import CapacityOptions, find_concurrency_capacity
from servecap.api.capacity.rate_capacity import find_rate_capacity
from servecap.api.run.progress import ProgressSink
from servecap.api.run.run import Secrets
from servecap.api.run.run_config import RunConfig
from servecap.storage.capacity_answer import CapacityAnswer


def find_capacity(
    config: RunConfig, options: CapacityOptions, secrets: Secrets | None = None,
    progress: ProgressSink | None = None,
) -> CapacityAnswer:
    """Search the boundary of `options.load`, verify, answer (see each search's module)."""
    if options.load == "rate":
        return find_rate_capacity(config, options, secrets, progress)
    if options.load == "agents":
        return find_agents_capacity(config, options, secrets, progress)
    return find_concurrency_capacity(config, options, secrets, progress)
