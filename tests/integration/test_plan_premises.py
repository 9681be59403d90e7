"""`citecheck plan --premise windows|chunks`: a day sized in either premise mode from the pairs per
sentence the judge asks for on the sample traffic in that mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from citecheck import demo
from citecheck.features import capacity
from citecheck.features.capacity import PlanError, Rates, TrafficProfile

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def profiles() -> dict[str, TrafficProfile]:
    traffic, config = demo.plan_traffic(turns_per_day=80), demo.sample_config()
    return {p: capacity.traffic_profile(traffic, config, premise=p) for p in ("windows", "chunks")}


def test_chunks_ask_for_fewer_and_longer_pairs_on_the_same_traffic(profiles):
    windows, chunks = profiles["windows"], profiles["chunks"]
    assert (windows.premise, chunks.premise) == ("windows", "chunks")
    assert chunks.sentences == windows.sentences and chunks.answers == windows.answers
    assert 0 < chunks.pairs_deduped < windows.pairs_deduped
    assert chunks.pairs_undeduped >= chunks.pairs_deduped
    assert chunks.pair_tokens > windows.pair_tokens > 0


def test_a_measured_chunk_rate_sizes_the_chunk_day(profiles):
    rates = Rates(model="minilm", cpu={"ONNX int8": 100.0}, cpu_threads=2, source="t",
                  chunk_cpu={"ONNX int8": 20.0}, pair_tokens=40.0, chunk_pair_tokens=300.0)
    result = capacity.plan(1000, rates, profiles["chunks"], sentences_per_answer=5.0)
    # measured on 300-token chunk pairs, carried to the sample's chunk length at the same tokens/s
    rate = 20.0 * 300.0 / profiles["chunks"].pair_tokens
    assert result["premise"] == "chunks" and result["cpu_pairs_per_second"] == pytest.approx(rate)
    assert result["cpu_rate_note"].startswith("measured on chunk pairs of 300 tokens")
    dedupe = result["scenarios"]["dedupe"]
    assert dedupe["pairs"] == round(1000 * 5.0 * profiles["chunks"].pairs_per_sentence("dedupe"))
    assert dedupe["cpu_hours"][1] == pytest.approx(dedupe["pairs"] / rate / 3600, rel=1e-3)
    without_lengths = Rates(model="minilm", cpu={"ONNX int8": 100.0}, cpu_threads=2, source="t",
                            chunk_cpu={"ONNX int8": 20.0})
    assert capacity.plan(1000, without_lengths, profiles["chunks"])["cpu_pairs_per_second"] == 20.0
    windows = capacity.plan(1000, rates, profiles["windows"], sentences_per_answer=5.0)
    assert windows["premise"] == "windows" and windows["cpu_pairs_per_second"] == 100.0


def test_without_a_chunk_rate_the_window_rate_is_scaled_by_tokens_and_says_so(profiles):
    rates = Rates(model="deberta", cpu={"ONNX int8": 12.0}, cpu_threads=2, source="t", pair_tokens=40.0)
    with pytest.raises(PlanError, match="chunk rate"):
        capacity.plan(1000, rates, profiles["chunks"])
    result = capacity.plan(1000, rates, profiles["chunks"], window_profile=profiles["windows"])
    scale = profiles["windows"].pair_tokens / profiles["chunks"].pair_tokens
    assert result["cpu_pairs_per_second"] == pytest.approx(12.0 * scale)
    assert result["cpu_rate_note"].startswith("estimate")
    assert "estimate" in result["gpu_source"]  # no GPU measured: the column says so
    assert "estimate: the window rate" in capacity.render(result)


def test_the_cli_sizes_both_modes(tmp_path):
    rates = tmp_path / "rates.json"
    rates.write_text(json.dumps({
        "format": "citecheck-nli-rates/1", "measured_at": "2026-12-02T05:00:00Z", "cpu_threads_per_worker": 2,
        "pairs": 100, "pair_tokens_mean": 45.0, "chunk_pair_tokens_mean": 280.0,
        "pairs_per_second": {"minilm": {"torch int8 dynamic": 120.0}},
        "chunk_pairs_per_second": {"minilm": {"torch int8 dynamic": 25.0}}, "gpu": None,
    }), encoding="utf-8")
    out = {}
    for premise in ("windows", "chunks"):
        run = subprocess.run(
            [sys.executable, "-m", "citecheck", "plan", "--answers", "20000", "--rates", str(rates),
             "--model", "minilm", "--premise", premise, "--json"],
            capture_output=True, text=True, cwd=REPO, timeout=600, check=False,
        )
        assert run.returncode == 0, run.stderr
        out[premise] = json.loads(run.stdout)
    chunk_rate = 25.0 * 280.0 / out["chunks"]["profile"]["pair_tokens"]
    assert out["chunks"]["premise"] == "chunks"
    assert out["chunks"]["cpu_pairs_per_second"] == pytest.approx(chunk_rate)
    assert out["windows"]["cpu_pairs_per_second"] == 120.0
    assert out["chunks"]["scenarios"]["dedupe"]["pairs"] < out["windows"]["scenarios"]["dedupe"]["pairs"]
