"""The simulator's promise on a real engine: calibrate from a few levels, predict the rest.

Measure llama-server at three levels of 128/128, calibrate a profile from that run with
`servecap sim calibrate` (the engine's 8 slots set from its `-np`, the rest fitted), then
measure what the calibration never saw (other concurrencies, and a second workload of
longer prompts and shorter outputs) and compare each with `servecap sim predict`'s answer.
Then users who think between requests (`servecap run --users`, one-request conversations):
the load `servecap verify` sends, whose arrivals are spread in time as no closed loop's are,
beside the same users run on the profile's model (`sim.users_sweep`, what `sim predict`'s
users check runs). Last, the calibration levels are measured once more: how far the engine
reproduces its own numbers on this machine, a floor no prediction can beat. Between the
groups c=1 is measured again too: how far the engine strayed while it ran (``Proof.drift``).
Used by bench/engine_proof.py (the dated record in docs/validation/engine-proof.md),
tests/engines/test_sim_calibrate_engine.py (that calibrate and predict work) and
tools/simlab/sim_holdout.py.

`two_workloads` (the bench's `--engine`) reuses the same measurements to show what a second
workload in the calibration buys: the 128/128 levels plus the 512/32 run's c=1 make a second
profile, and both profiles predict what neither saw (128/128 at the other levels, 512/32 at
c=4).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from servecap.api.predict.predict_beside import served_workload
from servecap.core.summary import LevelSummary
from servecap.sim import Profile, Request, load_profile_file, users_level
from tests.engines import procs
from tests.engines.sweep import LLAMA_EXTRA_BODY, read_json, servecap

CAL_LEVELS = (1, 4, 8)  # 128 in / 128 out: what the profile is calibrated on
# the base the proof calibrates (`sim calibrate --engine`): llama-server's own, whose decode
# step stops growing past a few sequences; the generic base's power law fits this engine to
# 16-21% (c = 1, 4, 8 ITL 2.5, 10.4, 10.9 ms), so its own fit error, which the bound allows,
# hid a 25.6% miss of the other levels that the llama.cpp base predicts to 10.8%
ENGINE = "llama.cpp"
OTHER_LEVELS = (2, 6, 16)  # same workload, levels it never saw (16: beyond the 8 slots)
SECOND = (512, 32, (1, 4))  # a second workload: input, output tokens, levels
# 5, not 3: with 3, c=1 rested on 3 requests and the fitted profile moved with them
ROUNDS = 5
CTX_PER_SLOT = 1024  # room for 512 + 32 tokens per slot
METRICS = ("ttft_mean_ms", "itl_mean_ms", "tps_mean", "latency_mean_s")
# no prompt cache: a slot keeps its last prompt, and the runs after the calibration reuse the
# same seeded prompts, so with the cache on they prefilled almost nothing (c=2 TTFT 18 ms
# against 80 ms at c=1 in the calibration run); the profile models no prefix cache
PROOF_EXTRA_BODY = {**LLAMA_EXTRA_BODY, "cache_prompt": False}
# users thinking exp:USERS_THINK_S s between one-request turns: about 4 of the 8 slots busy
# on average (16 x 3.8 / 13.8 s), so the count in flight ranges from idle to full
USERS, USERS_THINK_S = 16, 10.0
USERS_RAMP_S, USERS_DURATION_S = 10.0, 90.0
USERS_GROUP = f"{USERS} users, exp:{USERS_THINK_S:g}"
USERS_METRICS = ("ttft_mean_ms", "ttft_p90_ms", "itl_mean_ms", "latency_mean_s")
# the model's users run: long enough that its own sampling error is small beside the engine's
MODEL_WINDOW_S = 900.0
# the calibration levels measured again last: the calibration run as the "prediction" of its
# own repeat is how far this machine's engine reproduces itself over the proof's minutes
REPEAT = "engine repeat (128/128)"
# c=1 measured again between the held-out groups: the engine's speed just before and after
# each, against the calibration's c=1. The repeat at the end sees only a drift that lasts:
# beside a CPU hog, proof 34's engine slowed for minutes after the calibration (c=2 and 6
# ITL 27% and 33% over, users 34.6% against a bound of 25.6%) and was back by the repeat
# (5.6%), so only a probe beside each group gives it the floor its own minutes had.
PROBE_LEVEL = 1
PROBES = ("engine drift after the other levels", "engine drift after 512/32")


@dataclass(frozen=True)
class Cell:
    """One predicted number against its measurement."""

    workload: str
    concurrency: int
    metric: str
    predicted: float
    measured: float

    @property
    def error(self) -> float:
        return abs(self.predicted - self.measured) / abs(self.measured)


@dataclass
class Proof:
    """What the proof measured: the profile, its own errors, and the comparisons."""

    profile: Profile
    cells: list[Cell] = field(default_factory=list)
    wall_s: float = 0.0
    runs: dict[str, Path] = field(default_factory=dict)  # what was measured, by sweep name
    # each held-out group's bracketing probes: the groups whose PROBE_LEVEL cells were
    # measured just before and just after it
    brackets: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def group(self, workload: str, concurrency: int | None = None) -> list[Cell]:
        return [c for c in self.cells if c.workload == workload
                and concurrency in (None, c.concurrency)]  # fmt: skip

    def mean_error(self, workload: str, concurrency: int | None = None) -> float:
        cells = self.group(workload, concurrency)
        return sum(c.error for c in cells) / len(cells)

    def drift(self, workload: str) -> float:
        """How far the engine's c=1 strayed from the calibration's just before or after
        ``workload`` was measured (0 for a group with no probes)."""
        probes = self.brackets.get(workload, ())
        return max((self.mean_error(probe, PROBE_LEVEL) for probe in probes), default=0.0)

    def worst(self, workload: str) -> Cell:
        return max(self.group(workload), key=lambda c: c.error)


def engine(binary: Path, gguf: Path, log_dir: Path) -> procs.Engine:
    """llama-server with 8 slots of CTX_PER_SLOT tokens each, one thread."""
    eng = procs.llama_server(binary, gguf, log_dir)
    argv = list(eng.argv)
    argv[argv.index("-c") + 1] = str(procs.SLOTS * CTX_PER_SLOT)
    eng.argv = argv
    return eng


def _run(eng: procs.Engine, out: Path, name: str, load: list[str], input_tokens: int,
         output_tokens: int) -> Path:  # fmt: skip
    """One `servecap run` with the proof's request shape and ``load``'s flags; its run
    directory (raises with stderr on failure)."""
    args = [
        "run", "--base-url", eng.base_url, "--model", eng.model, "--name", name, *load,
        "--input-tokens", str(input_tokens), "--output-tokens", str(output_tokens),
        "--timeout", "300", "--stall-timeout", "120", "--out", str(out / name),
        "--extra-body", json.dumps(PROOF_EXTRA_BODY),
    ]  # fmt: skip
    result = servecap(*args, timeout_s=900)
    if result.returncode != 0:
        raise AssertionError(f"servecap run exited {result.returncode}:\n{result.stderr[-4000:]}")
    (run_dir,) = [p.parent for p in (out / name).glob("*/run.json")]
    return run_dir


def sweep(
    eng: procs.Engine, out: Path, name: str, levels: Sequence[int], input_tokens: int,
    output_tokens: int,
) -> Path:  # fmt: skip
    """One `servecap run` of ``levels``; its run directory."""
    load = ["--concurrency", ",".join(map(str, levels)), "--rounds", str(ROUNDS), "--warmup", "2"]
    return _run(eng, out, name, load, input_tokens, output_tokens)


def users_run(eng: procs.Engine, out: Path, name: str = "users") -> Path:
    """`servecap run --users USERS` thinking exp:USERS_THINK_S, one request per
    conversation, 128 / 128 tokens; its run directory."""
    load = ["--users", str(USERS), "--think-time", f"exp:{USERS_THINK_S:g}", "--turns", "1",
            "--ramp-s", str(USERS_RAMP_S), "--duration", str(USERS_DURATION_S)]  # fmt: skip
    return _run(eng, out, name, load, 128, 128)


def _users_means(done: list[Request]) -> dict[str, float]:
    ttft = sorted(1000.0 * r.ttft_s for r in done)
    itl = [1000.0 * gap for r in done if (gap := r.itl_s) is not None]
    return {
        "ttft_mean_ms": sum(ttft) / len(ttft),
        "ttft_p90_ms": float(np.percentile(ttft, 90.0)),
        "itl_mean_ms": sum(itl) / len(itl),
        "latency_mean_s": sum(r.latency_s for r in done) / len(done),
    }


def compare_users(profile: Profile, run_dir: Path) -> list[Cell]:
    """The measured users level beside the same users run on the profile's model."""
    rng = random.Random(0)
    level = users_level(profile.params, USERS, lambda: rng.expovariate(1.0 / USERS_THINK_S),
                        USERS_RAMP_S, MODEL_WINDOW_S, *served(run_dir))  # fmt: skip
    model = _users_means(level.requests)
    (row,) = read_json(run_dir / "summary.json")
    return [Cell(USERS_GROUP, USERS, metric, model[metric], float(row[metric]))
            for metric in USERS_METRICS if row.get(metric)]  # fmt: skip


def calibrate(run_dir: Path | Sequence[Path], out: Path, engine: str = ENGINE) -> Profile:
    """`servecap sim calibrate RUN... --max-num-seqs 8 --engine ENGINE`: the profile it
    writes."""
    kv = procs.SLOTS * CTX_PER_SLOT
    dirs = [run_dir] if isinstance(run_dir, Path) else list(run_dir)
    result = servecap(
        "sim", "calibrate", *map(str, dirs), "--out", str(out), "--name", "llama-tiny",
        "--max-num-seqs", str(procs.SLOTS), "--kv-budget-tokens", str(kv), "--engine", engine,
        timeout_s=900,
    )  # fmt: skip
    if result.returncode != 0:
        raise AssertionError(f"calibrate exited {result.returncode}:\n{result.stderr[-4000:]}")
    return load_profile_file(out)


def served(run_dir: Path) -> tuple[int, int]:
    """(prompt, output) tokens of a run as its server counted them, as `sim calibrate` reads
    them and the report predicts a run at: the unit the profile is fitted in. Asked 128/128
    came to 134/128 on this engine (its chat template) and 512/32 to 433/32 (the test model's
    tokenizer is not servecap's)."""
    rows = [LevelSummary.model_validate(row) for row in read_json(run_dir / "summary.json")]
    lengths = served_workload(rows)
    assert lengths is not None, run_dir  # llama-server reports usage
    return lengths


def predicted(profile: Path, levels: Sequence[int], run_dir: Path) -> list[dict[str, Any]]:
    """`servecap sim predict PROFILE --format json` at ``run_dir``'s served lengths: its
    levels."""
    input_tokens, output_tokens = served(run_dir)
    result = servecap(
        "sim", "predict", str(profile), "--concurrency", ",".join(map(str, levels)),
        "--input-tokens", str(input_tokens), "--output-tokens", str(output_tokens),
        "--rounds", str(ROUNDS), "--format", "json",
    )  # fmt: skip
    if result.returncode != 0:
        raise AssertionError(f"predict exited {result.returncode}:\n{result.stderr[-4000:]}")
    levels_out: list[dict[str, Any]] = json.loads(result.stdout)["levels"]
    return levels_out


def compare(workload: str, pred: list[dict[str, Any]], run_dir: Path) -> list[Cell]:
    """A cell per level and metric of the measured run."""
    by_c = {int(row["concurrency"]): row for row in pred}
    cells = []
    for row in read_json(run_dir / "summary.json"):
        want = by_c[int(row["concurrency"])]
        for metric in METRICS:
            if row.get(metric) and want.get(metric) is not None:
                cells.append(Cell(workload, int(row["concurrency"]), metric,
                                  float(want[metric]), float(row[metric])))  # fmt: skip
    return cells


def run_proof(binary: Path, gguf: Path, tmp: Path) -> Proof:
    """Measure, calibrate, predict, measure again, compare (see the module docstring)."""
    started = time.monotonic()
    eng = engine(binary, gguf, tmp)
    eng.start(health_timeout_s=60)
    try:
        cal_run = sweep(eng, tmp, "calibrate", CAL_LEVELS, 128, 128)
        other_run = sweep(eng, tmp, "other-levels", OTHER_LEVELS, 128, 128)
        probe_runs = [sweep(eng, tmp, "probe-1", (PROBE_LEVEL,), 128, 128)]
        inp, outp, levels = SECOND
        second_run = sweep(eng, tmp, "second-workload", levels, inp, outp)
        probe_runs.append(sweep(eng, tmp, "probe-2", (PROBE_LEVEL,), 128, 128))
        users = users_run(eng, tmp)
        repeat_run = sweep(eng, tmp, "repeat", CAL_LEVELS, 128, 128)
    finally:
        eng.stop()
    prof_path = tmp / "llama-tiny.toml"
    proof = Proof(calibrate(cal_run, prof_path))
    proof.runs = {"calibrate": cal_run, "other-levels": other_run, "second": second_run,
                  "users": users}  # fmt: skip
    proof.cells += compare("128/128 other levels",
                           predicted(prof_path, OTHER_LEVELS, other_run), other_run)  # fmt: skip
    proof.cells += compare(f"{inp}/{outp}", predicted(prof_path, levels, second_run), second_run)
    proof.cells += compare_users(proof.profile, users)
    calibrated = read_json(cal_run / "summary.json")
    proof.cells += compare(REPEAT, calibrated, repeat_run)
    for probe, run_dir in zip(PROBES, probe_runs, strict=True):
        proof.cells += compare(probe, calibrated, run_dir)
    after_other, after_second = PROBES
    proof.brackets = {"128/128 other levels": (after_other,),
                      f"{inp}/{outp}": (after_other, after_second),
                      USERS_GROUP: (after_second, REPEAT)}  # fmt: skip
    proof.wall_s = time.monotonic() - started
    return proof


def subset(run_dir: Path, out: Path, levels: Sequence[int]) -> Path:
    """A run directory holding only ``levels`` of ``run_dir``'s summary (as measured)."""
    rows = [r for r in read_json(run_dir / "summary.json") if int(r["concurrency"]) in levels]
    out.mkdir(parents=True)
    (out / "summary.json").write_text(json.dumps(rows), encoding="utf-8")
    return out


def two_workloads(proof: Proof, tmp: Path) -> list[tuple[str, float, float]]:
    """(group, mean error of the 128/128 profile, of the 128/128 + 512/32 c=1 profile) over
    what neither profile saw."""
    inp, outp, levels = SECOND
    seen, unseen = levels[:1], levels[1:]
    both = tmp / "llama-tiny-two.toml"
    calibrate([proof.runs["calibrate"], subset(proof.runs["second"], tmp / "seen", seen)], both)
    rest = subset(proof.runs["second"], tmp / "unseen", unseen)
    out = []
    for group, run_dir, lv in (
        ("128/128 other levels", proof.runs["other-levels"], OTHER_LEVELS),
        (f"{inp}/{outp} c={','.join(map(str, unseen))}", rest, unseen),
    ):
        errors = []
        for profile in (tmp / "llama-tiny.toml", both):
            cells = compare(group, predicted(profile, lv, run_dir), run_dir)
            errors.append(sum(c.error for c in cells) / len(cells))
        out.append((group, errors[0], errors[1]))
    return out


def generic_base(proof: Proof, tmp: Path) -> list[tuple[str, float, float]]:
    """(group, error of the proof's profile (`--engine llama.cpp`), of one fitted from the
    same calibration run with the generic base): the fit error, then each prediction group."""
    generic = calibrate(proof.runs["calibrate"], tmp / "generic.toml", "generic")
    inp, outp, levels = SECOND
    groups = (("128/128 other levels", proof.runs["other-levels"], OTHER_LEVELS),
              (f"{inp}/{outp}", proof.runs["second"], levels))  # fmt: skip
    out = [("fit error (c=1,4,8)", float(proof.profile.calibration["mape"]),
            float(generic.calibration["mape"]))]  # fmt: skip
    for group, run_dir, lv in groups:
        cells = compare(group, predicted(tmp / "generic.toml", lv, run_dir), run_dir)
        out.append((group, proof.mean_error(group), sum(c.error for c in cells) / len(cells)))
    users = compare_users(generic, proof.runs["users"])
    out.append((USERS_GROUP, proof.mean_error(USERS_GROUP),
                sum(c.error for c in users) / len(users)))  # fmt: skip
    return out


def table(proof: Proof) -> str:
    """The comparison as text: one line per cell, then each group's mean and worst."""
    cal = proof.profile.calibration
    lines = [
        f"profile fitted on c={','.join(map(str, CAL_LEVELS))} (128/128): fit error "
        f"{float(cal['mape']):.1%}, held-out {float(cal.get('holdout_mape', 'nan')):.1%} "
        f"({cal.get('holdout_split', 'none')}); loose: {cal.get('loose', 'none')}",
        f"{'workload':<22} {'c':>3} {'metric':<15} {'predicted':>10} {'measured':>10} {'error':>7}",
    ]
    for c in proof.cells:
        lines.append(f"{c.workload:<22} {c.concurrency:>3} {c.metric:<15} {c.predicted:>10.2f} "
                     f"{c.measured:>10.2f} {c.error:>7.1%}")  # fmt: skip
    for workload in dict.fromkeys(c.workload for c in proof.cells):
        worst = proof.worst(workload)
        lines.append(f"{workload}: mean error {proof.mean_error(workload):.1%}, worst "
                     f"{worst.error:.1%} (c={worst.concurrency} {worst.metric})")  # fmt: skip
    lines.append(f"(proof took {proof.wall_s:.0f} s)")
    return "\n".join(lines)
