import pytest

from servecap.core.records import RequestRecord
from servecap.core.request_metrics import request_metrics
from servecap.metrics.level import summarise_level

MS = 1_000_000


def record(chunks_ms, tokens, chunk_tokens=(), sent_ms=0, end_ms=None, answer=True, **kw):
    times = [int(t * MS) for t in chunks_ms]
    return RequestRecord(
        request_id=0, concurrency=1, stream_index=0, scheduled_at=0, sent_at=int(sent_ms * MS),
        first_byte_at=times[0], first_token_at=times[0],
        first_answer_at=times[0] if answer else None, last_token_at=times[-1],
        ended_at=int((end_ms if end_ms is not None else chunks_ms[-1]) * MS),
        chunk_at=times, chunk_tokens=list(chunk_tokens), completion_tokens=tokens,
        token_source="usage", **kw,
    )


def test_one_token_per_chunk_is_the_familiar_n_minus_one():
    # TTFT 100 ms, then 9 more tokens 10 ms apart: ITL 10 ms, latency 200 ms.
    rec = record([100 + 10 * i for i in range(10)], 10, end_ms=200)
    m = request_metrics(rec)
    assert m.ttft_ns == 100 * MS
    assert m.itl_ns == pytest.approx(10 * MS)
    assert m.tps == pytest.approx(10 / 0.2)
    assert m.decode_tps == pytest.approx(100.0)
    assert m.latency_ns == 200 * MS


def test_several_tokens_per_chunk_stays_per_token():
    # 4 tokens a chunk, chunks 40 ms apart => 10 ms per token; /(N-1) would say 160/15.
    rec = record([100, 140, 180, 220, 260], 20, end_ms=260)
    m = request_metrics(rec)
    assert m.itl_ns == pytest.approx(10 * MS)
    assert m.itl_ns != pytest.approx(160 * MS / 19)


def test_per_chunk_usage_sets_first_chunk_tokens():
    # first chunk carries 1 token, then 3 per chunk, 30 ms apart => 10 ms per token
    rec = record([100, 130, 160], 7, chunk_tokens=[1, 3, 3], end_ms=160)
    assert request_metrics(rec).itl_ns == pytest.approx(10 * MS)


def test_reasoning_only_output_has_ttft_but_no_answer_time():
    rec = record([50, 60, 70], 3, answer=False, end_ms=70)
    m = request_metrics(rec)
    assert m.ttft_ns == 50 * MS and m.ttfa_ns is None


def test_failed_requests_have_no_metrics_and_leave_percentiles():
    ok = record([100, 110], 2, end_ms=110)
    bad = record([5, 6], 2, end_ms=6, status="failed", reason="http_5xx")
    assert request_metrics(bad) is None
    summary = summarise_level(1, [ok, bad])
    assert summary.n_ok == 1 and summary.n_failed == 1
    assert summary.error_rate == pytest.approx(0.5)
    assert summary.failures == {"http_5xx": 1}
    assert summary.ttft_mean_ms == pytest.approx(100.0)


def test_throughput_is_over_wall_time_not_one_over_latency():
    # two streams, each two back-to-back requests of 100 ms: wall 200 ms, 4 requests
    recs = []
    for stream in range(2):
        for i in range(2):
            start = 100 * i
            recs.append(record([start + 50, start + 100], 10, sent_ms=start, end_ms=start + 100))
    summary = summarise_level(2, recs)
    assert summary.wall_s == pytest.approx(0.2)
    assert summary.rps == pytest.approx(20.0)
    assert summary.output_tok_s == pytest.approx(200.0)
    assert summary.served_concurrency == pytest.approx(2.0)
    assert summary.latency_mean_s == pytest.approx(0.1)


def test_warmup_records_are_excluded():
    warm = record([10, 20], 2, end_ms=20, warmup=True)
    real = record([100, 110], 2, end_ms=110)
    assert summarise_level(1, [warm, real]).n_requests == 1
