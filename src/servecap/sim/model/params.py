"""Parameters of the simulator's performance model (validated, immutable).

Every parameter belongs to one mechanism (``MECHANISMS``): the frontend, batching, prefill,
the KV cache and its prefix cache, admission, speculative decoding, warm-up and drift, and
the fixed schedule. A profile's ``[params]`` table may list them flat or in one sub-table
per mechanism (``[params.batching]``); both load the same. Durations are in milliseconds
where the name says ``*_ms``. Every field has a default, so a profile sets only what it needs.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: the names the calibrator may tune, with their (low, high) search bounds
FIT_BOUNDS: dict[str, tuple[float, float]] = {
    "frontend_ms": (0.0, 800.0),
    "frontend_jitter": (0.0, 1.0),
    "step_base_ms": (0.5, 40.0),
    "decode_ms_per_seq": (0.0, 10.0),
    "decode_exp": (0.3, 2.0),
    "decode_batch_cap": (1.0, 32.0),
    "ctx_ms_per_ktoken": (0.0, 2.0),
    "prefill_ms_per_token": (0.0, 2.0),
    "prefill_step_ms": (0.0, 400.0),
    "admit_ratio": (0.0, 1.0),
    "admit_interval_ms": (0.0, 1500.0),
    "admit_hold_steps": (0.0, 60.0),
    "admit_hold_knee": (1.0, 64.0),
    "acceptance": (0.05, 0.98),
    "draft_ms": (0.0, 10.0),
    "verify_ms_per_token": (0.0, 2.0),
    "verify_exp": (0.5, 2.5),
    "spec_eager_step_ms": (0.0, 300.0),
}
#: parameters earlier versions wrote into every profile, and what replaced them (a profile
#: fitted before loads as it was, read by today's model: `ModelParams._renamed`)
RETIRED = {
    "spec_eager_floor_ms": "spec_eager_step_ms",
    "spec_eager_factor": None,
    # a fitted delay for a share of requests that no mechanism explained (one seed profile)
    "frontend_tail_p": None,
    "frontend_tail_ms": None,
}

#: how the scheduler lets a request that reaches a busy batch join it (``admission``):
#: ``at_once`` at the next step; ``hold_ms`` after a seeded hold of mean ``admit_interval_ms``;
#: ``hold_steps`` after ``admit_hold_steps`` steps as long as the last one; ``hold_knee``
#: after ``admit_hold_steps`` decode steps scaled by the load up to ``admit_hold_knee``
AdmissionPolicy = Literal["at_once", "hold_ms", "hold_steps", "hold_knee"]

#: each mechanism and the parameters that set it (every parameter is in exactly one)
MECHANISMS: dict[str, tuple[str, ...]] = {
    "frontend": ("frontend_ms", "frontend_jitter"),
    "batching": (
        "idle_window_ms", "step_base_ms", "decode_ms_per_seq", "decode_exp",
        "decode_batch_cap", "ctx_ms_per_ktoken", "max_num_seqs", "jitter",
    ),
    "prefill": (
        "prefill_ms_per_token", "prefill_step_ms", "prefill_budget_tokens", "prefill_alone",
        "output_lag",
    ),
    "kv_cache": ("kv_budget_tokens", "prefix_caching", "prefix_block_tokens"),
    "admission": (
        "admission", "admit_ratio", "admit_interval_ms", "admit_hold_steps", "admit_hold_knee",
        "admit_hold_shape", "gather_ms",
    ),
    "speculative": (
        "num_spec_tokens", "acceptance", "draft_ms", "verify_ms_per_token", "verify_exp",
        "spec_graph_max_batch", "spec_eager_step_ms", "spec_off_when_waiting",
    ),
    "warmup_drift": ("warmup_s", "warmup_factor", "drift_per_min"),
    "fixed_schedule": ("fixed_ttft_ms", "fixed_itl_ms", "tokens_per_chunk", "fixed_serial_ms"),
}  # fmt: skip


class ModelParams(BaseModel):
    """The knobs of the step-based continuous-batching model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # fixed latency before the scheduler sees a request (HTTP, tokenisation, frontend)
    frontend_ms: float = Field(0.0, ge=0.0)
    # per-request spread of that latency: uniform in frontend_ms * [1 - j, 1 + j] (seeded);
    # it also keeps closed-loop streams from staying in lock-step
    frontend_jitter: float = Field(0.0, ge=0.0, le=1.0)
    # when the engine is idle, wait this long after the first ready request before stepping
    idle_window_ms: float = Field(2.0, ge=0.0)
    # cost of one engine step
    step_base_ms: float = Field(10.0, ge=0.0)
    decode_ms_per_seq: float = Field(0.0, ge=0.0)
    decode_exp: float = Field(1.0, gt=0.0, le=4.0)
    # the batch size beyond which a decode step costs no more (0: none): a CPU engine
    # (llama.cpp) saturates its cores at a few sequences, then steps them all in about the
    # same time, which no power law follows; a GPU engine's step grows on
    decode_batch_cap: float = Field(0.0, ge=0.0)
    ctx_ms_per_ktoken: float = Field(0.0, ge=0.0)
    prefill_ms_per_token: float = Field(0.0, ge=0.0)
    prefill_step_ms: float = Field(0.0, ge=0.0)
    # chunked prefill: at most this many prompt tokens are processed in one step
    prefill_budget_tokens: int = Field(8192, ge=1)
    # scheduling policy, set from the engine rather than fitted (see step_engine.py):
    # a step that prefills runs alone, the running requests do not decode in it (SGLang
    # without --enable-mixed-chunk); off, prefill chunks ride along in the decode batch (vLLM)
    prefill_alone: bool = False
    # a step's tokens go out only once the next step is launched (SGLang's overlap
    # scheduler), and launching a prefill step takes as long as running it (an eager,
    # launch-bound prefill), so a step followed by a prefill step delivers when that ends
    output_lag: bool = False
    # admission
    max_num_seqs: int = Field(256, ge=1)
    kv_budget_tokens: int = Field(1_000_000, ge=1)
    # automatic prefix caching (vLLM's APC, SGLang's radix cache): prompts are hashed in
    # blocks of prefix_block_tokens tokens (4 characters a token, see blocks.py); cached
    # blocks live in the KV budget with LRU eviction and a request prefills only what the
    # cache does not hold (see prefix_cache.py). Off by default and in the seed profiles
    # (calibrated without it); `servecap sim --prefix-caching on` turns it on. The
    # fixed-schedule mode ignores it.
    prefix_caching: bool = False
    prefix_block_tokens: int = Field(16, ge=1, le=4096)
    # the admission policy, by name (see AdmissionPolicy); a profile written before it was
    # named gets the one its numbers used (`_admission_of`)
    admission: AdmissionPolicy = "at_once"
    # while a batch runs, hold each new request for a seeded exponential time of mean
    # admit_interval_ms, then admit the held ones together once at least
    # admit_ratio * running are due (0, 0 = admit at once)
    admit_ratio: float = Field(0.0, ge=0.0, le=4.0)
    admit_interval_ms: float = Field(0.0, ge=0.0)
    # the hold's mean in engine steps instead (> 0: used in place of admit_interval_ms): a
    # scheduler that lets new requests in at step boundaries holds them for steps, not ms,
    # so the hold grows with the step time under load
    admit_hold_steps: float = Field(0.0, ge=0.0)
    # admission hold_knee: the hold in steps grows with the requests held up to the knee,
    # then stays (a scheduler whose wait grows with its load until it saturates): its mean is
    # admit_hold_steps * min(1, held / admit_hold_knee) steps of the running batch's decode
    # (a prefill chunk in the last step does not lengthen it), with no gate (admit_ratio)
    admit_hold_knee: float = Field(0.0, ge=0.0)
    # the hold's spread: a gamma of this shape (mean 1; 1 = exponential, whose P90 is 2.3
    # times its mean; larger shapes spread less: a gamma(8)'s P90 is 1.47 times)
    admit_hold_shape: float = Field(1.0, gt=0.0, le=64.0)
    # requests that reach the scheduler within gather_ms of an idle engine starting a batch
    # join it without the hold (a closed loop's streams come back a few ms apart)
    gather_ms: float = Field(0.0, ge=0.0)
    # speculative decoding (num_spec_tokens = 0 disables it)
    num_spec_tokens: int = Field(0, ge=0, le=32)
    acceptance: float = Field(0.0, ge=0.0, le=1.0)
    draft_ms: float = Field(0.0, ge=0.0)
    verify_ms_per_token: float = Field(0.0, ge=0.0)
    verify_exp: float = Field(1.0, gt=0.0, le=4.0)
    # speculative steps with more than spec_graph_max_batch decoding sequences run without
    # captured graphs: their decode + draft + verify cost is spec_eager_step_ms, whatever the
    # batch, as eager steps are bound by the CPU's kernel launches, which hide the GPU's work
    spec_graph_max_batch: int = Field(0, ge=0)  # 0 = no limit
    spec_eager_step_ms: float = Field(0.0, ge=0.0)
    # turn speculation off for a step while the next waiting request finds no KV space or
    # sequence slot (memory pressure; requests in their admission hold do not count)
    spec_off_when_waiting: bool = False
    # seeded multiplicative jitter on step times (standard deviation as a fraction)
    jitter: float = Field(0.0, ge=0.0, le=0.5)
    # warm-up and drift (off by default; see warmup.py): in the first warmup_s seconds of
    # the server's life a step takes up to warmup_factor times as long (the factor decays
    # linearly to 1), and every step takes drift_per_min longer per minute of uptime
    # (0.01: 1% slower after a minute), as caches fill, compilers warm up or memory fragments
    warmup_s: float = Field(0.0, ge=0.0)
    warmup_factor: float = Field(1.0, ge=1.0, le=100.0)
    drift_per_min: float = Field(0.0, ge=0.0, le=10.0)
    # fixed-schedule mode (deterministic profile): exact TTFT and ITL, batch-independent
    fixed_ttft_ms: float | None = Field(None, ge=0.0)
    fixed_itl_ms: float | None = Field(None, ge=0.0)
    tokens_per_chunk: int = Field(1, ge=1)
    # fixed-schedule mode: a serial stage before the schedule (a single-threaded frontend)
    # that takes this long per request, one request at a time in arrival order (0: none);
    # it gives the schedule a saturation point computable from the parameters
    fixed_serial_ms: float = Field(0.0, ge=0.0)

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: Any) -> Any:
        """Flatten per-mechanism sub-tables; a profile written before a parameter was
        retired (`RETIRED`) loads: its value moves to the parameter that replaced it, or is
        dropped where none did; one written before the admission policy had a name gets the
        policy its numbers used."""
        if not isinstance(data, dict):
            return data
        out = _flatten(data)
        for old, new in RETIRED.items():
            if old in out:
                value = out.pop(old)
                if new is not None:
                    out.setdefault(new, value)
        out.setdefault("admission", _admission_of(out))
        return out

    @model_validator(mode="after")
    def _policy_has_its_numbers(self) -> ModelParams:
        if self.admission == "hold_knee" and not self.admit_hold_knee > 0.0:
            raise ValueError("admission hold_knee needs admit_hold_knee > 0")
        return self

    @property
    def speculative(self) -> bool:
        """True when the model drafts tokens each step."""
        return self.num_spec_tokens > 0

    @property
    def fixed(self) -> bool:
        """True for the exact fixed-schedule mode."""
        return self.fixed_ttft_ms is not None and self.fixed_itl_ms is not None


def _flatten(data: dict[str, Any]) -> dict[str, Any]:
    """``{"batching": {...}, "max_num_seqs": 8}`` -> one flat table (a name given twice:
    the mechanism's sub-table wins)."""
    out = {k: v for k, v in data.items() if k not in MECHANISMS}
    for mechanism in MECHANISMS:
        table = data.get(mechanism)
        if isinstance(table, dict):
            out.update(table)
        elif mechanism in data:
            out[mechanism] = table  # not a table: let validation name it
    return out


def _admission_of(data: dict[str, Any]) -> str:
    """The admission policy an unnamed profile's numbers chose (as the model did before the
    policy had a name): a knee, else a hold in steps, else one in ms or a gate, else none."""

    def positive(name: str) -> bool:
        value = data.get(name, 0.0)
        return isinstance(value, int | float) and value > 0

    if positive("admit_hold_knee"):
        return "hold_knee"
    if positive("admit_hold_steps"):
        return "hold_steps"
    if positive("admit_interval_ms") or positive("admit_ratio"):
        return "hold_ms"
    return "at_once"


def mechanism_of(name: str) -> str:
    """The mechanism a parameter belongs to."""
    for mechanism, names in MECHANISMS.items():
        if name in names:
            return mechanism
    raise KeyError(name)
