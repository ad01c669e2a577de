"""`--ray`: a level run by Ray actors on a local two-node cluster, on loopback only.

The cluster is `ray.cluster_utils.Cluster` with one CPU and an 80 MB object store a node,
no dashboard, log monitor or autoscaler monitor; Ray binds every interface unless its node
IP is exactly 127.0.0.1, and its processes try outside hosts (usage stats, cloud metadata)
unless those point at a dead loopback port, so the environment says so before it starts.
The test stops only the cluster it made, by its handle (never `ray stop`, which stops every
Ray process on the machine), and asserts that every socket its processes listen on is on
loopback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.kinds.open_loop import OpenLoad, level_offsets_ns
from servecap.sim import start_server_process
from tests.interrupt.proc import load_rows

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'servecap[ray]'")
cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = pytest.mark.slow

DEAD = "http://127.0.0.1:9"
LOOPBACK_ENV = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_USAGE_STATS_REPORT_URL": DEAD, "HTTP_PROXY": DEAD, "HTTPS_PROXY": DEAD,
    "http_proxy": DEAD, "https_proxy": DEAD, "NO_PROXY": "127.0.0.1,localhost,::1",
    "no_proxy": "127.0.0.1,localhost,::1",
}
NODE = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024, "include_dashboard": False,
        "node_ip_address": "127.0.0.1",
        "include_log_monitor": False, "no_monitor": True}


def descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def listening(pids: set[int]) -> list[str]:
    """`ip:port` of every TCP socket in LISTEN that one of `pids` holds."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A" and cols[9] in inodes:  # 0A: LISTEN
                found.append(_address(cols[1], width))
    return found


def _address(text: str, width: int) -> str:
    ip_hex, port = text.split(":")
    raw = bytes.fromhex(ip_hex)
    # /proc/net/tcp writes each 32-bit word in host (little-endian) order
    words = [raw[i:i + 4][::-1] for i in range(0, len(raw), 4)]
    ip = b"".join(words)
    if width == 8:
        return ".".join(str(b) for b in ip) + f":{int(port, 16)}"
    return ip.hex() + f":{int(port, 16)}"


def is_loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0]
    # 127/8, ::1, or 127/8 as an IPv4-mapped IPv6 address (::ffff:127.x.y.z)
    return host.startswith(("127.", "0" * 20 + "ffff7f")) or host == "0" * 31 + "1"


@pytest.fixture
def two_nodes(monkeypatch):
    for name, value in LOOPBACK_ENV.items():
        monkeypatch.setenv(name, value)  # for the processes the cluster starts
    # and for this process, which imported Ray (and read the variable) before the test
    from ray._private import ray_constants

    monkeypatch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)
    cluster = cluster_utils.Cluster(initialize_head=True, head_node_args=dict(NODE))
    try:
        cluster.add_node(**NODE)
        cluster.wait_for_nodes()
        yield cluster
    finally:
        cluster.shutdown()  # this cluster's processes only, by its handle


def test_a_two_node_cluster_runs_a_level_and_merges_exactly(two_nodes, tmp_path):
    load = OpenLoad(rates=[20.0], requests=30, warmup_s=0, cooldown_s=0, seed=5)
    with start_server_process("deterministic") as sim:
        config = RunConfig(
            name="ray", output_tokens=8, input_tokens=16, warmup=0, out_dir=str(tmp_path),
            client=ClientOptions(base_url=sim.base_url), server_metrics="off",
            load=load, ray_address=two_nodes.address,
        )
        outcome = run_benchmark(config, Secrets())
        ray_listeners = listening(descendants(os.getpid()) | {os.getpid()})
    level = outcome.levels[0]
    assert level.workers == 2 and (level.n_ok, level.n_failed) == (30, 0)
    rows = load_rows(outcome.run_dir / "requests.jsonl")
    assert sorted(r["stream_index"] for r in rows) == list(range(30))
    offsets = level_offsets_ns(load.levels()[0])
    start = min(r["scheduled_at"] - offsets[r["stream_index"]] for r in rows)
    assert sorted(r["scheduled_at"] - start for r in rows) == sorted(offsets)
    workers = outcome.info.workers
    assert workers["mode"] == "RayPool" and workers["count"] == 2
    assert len({c["node_id"] for c in workers["clock"]}) == 2  # one actor on each node
    assert all(isinstance(c["offset_ns"], int) and c["rtt_ns"] > 0 for c in workers["clock"])
    stored = json.loads((outcome.run_dir / "run.json").read_text())["workers"]
    assert stored["clock"] == workers["clock"]
    assert ray_listeners, "found no Ray listener to check"
    assert [a for a in ray_listeners if not is_loopback(a)] == []
    assert not is_loopback("0.0.0.0:1") and not is_loopback("0" * 32 + ":1")  # any address
