"""`citecheck plan` (issue 15): a day's NLI wall time from measured rates and the judge's own pair counts."""

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
def profile() -> TrafficProfile:
    return capacity.traffic_profile(demo.plan_traffic(turns_per_day=80), demo.sample_config())


def write_rates(path: Path, rates: dict, gpu: dict | None = None) -> Path:
    doc = {
        "format": "citecheck-nli-rates/1",
        "measured_at": "2026-12-01T15:00:00Z",
        "cpu_threads_per_worker": 2,
        "pairs": 2000,
        "pair_tokens_mean": 80.0,
        "pairs_per_second": rates,
        "gpu": gpu,
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_the_sample_profile_counts_what_the_judge_asks_for(profile):
    assert profile.answers > 0 and profile.sentences > profile.answers  # several check-worthy sentences each
    # dedupe never adds pairs, the cache never adds pairs, and a sentence needs at least its cited windows
    assert profile.pairs_undeduped >= profile.pairs_deduped > 0
    assert 0.0 <= profile.second_day_cache_hit_rate < 1.0
    per = [profile.pairs_per_sentence(s) for s in ("no dedupe", "dedupe", "dedupe + cache")]
    assert per[0] >= per[1] >= per[2] > 0


def test_wall_time_is_pairs_over_rate_and_workers(profile):
    rates = Rates(model="deberta", cpu={"torch fp32": 10.0, "OpenVINO int8": 40.0}, cpu_threads=2, source="t")
    result = capacity.plan(20_000, rates, profile, sentences_per_answer=6.0, window_hours=4.0)
    assert result["variant"] == "OpenVINO int8"  # the fastest measured, unless asked
    unfaithful = Rates(model="deberta", cpu={"torch fp32": 10.0, "OpenVINO int8": 40.0, "fast": 90.0},
                       cpu_threads=2, source="t", flip_share={"fast": 0.05, "OpenVINO int8": 0.004})
    assert capacity.plan(100, unfaithful, profile)["variant"] == "OpenVINO int8"  # > 1% flips: not chosen
    dedupe = result["scenarios"]["dedupe"]
    assert dedupe["pairs"] == round(20_000 * 6.0 * profile.pairs_per_sentence("dedupe"))
    for workers, hours in dedupe["cpu_hours"].items():
        assert hours == pytest.approx(dedupe["pairs"] / (40.0 * workers) / 3600, rel=1e-6)
    needed = result["cpu_workers_for_window"]
    assert dedupe["pairs"] / (40.0 * needed) / 3600 <= 4.0 < (
        dedupe["pairs"] / (40.0 * (needed - 1)) / 3600 if needed > 1 else 5.0
    )
    assert result["pool_slots"] == needed and result["shards"] == capacity.SHARDS_PER_SLOT * needed
    slower = capacity.plan(20_000, rates, profile, sentences_per_answer=6.0, variant="torch fp32", window_hours=4.0)
    assert slower["scenarios"]["dedupe"]["cpu_hours"][1] == pytest.approx(4 * dedupe["cpu_hours"][1])


def test_the_gpu_rate_is_marked_as_an_estimate_unless_measured(profile, tmp_path):
    estimated = capacity.rates_from_file(write_rates(tmp_path / "a.json", {"deberta": {"torch fp32": 9.0}}), "deberta")
    result = capacity.plan(1000, estimated, profile)
    assert "estimate" in result["gpu_source"] and result["gpu_pairs_per_second"] > 9.0
    assert "estimate" in capacity.render(result)
    measured = capacity.rates_from_file(
        write_rates(tmp_path / "b.json", {"deberta": {"torch fp32": 9.0}}, gpu={"deberta": 900.0}), "deberta"
    )
    result = capacity.plan(1000, measured, profile)
    assert result["gpu_source"] == "measured" and result["gpu_pairs_per_second"] == 900.0


def test_bad_rates_and_arguments_are_clear_errors(profile, tmp_path):
    (tmp_path / "junk.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(PlanError, match="cannot read"):
        capacity.rates_from_file(tmp_path / "junk.json", "deberta")
    (tmp_path / "other.json").write_text('{"format": "x"}', encoding="utf-8")
    with pytest.raises(PlanError, match="not a rates file"):
        capacity.rates_from_file(tmp_path / "other.json", "deberta")
    with pytest.raises(PlanError, match="no rates for model"):
        capacity.rates_from_file(write_rates(tmp_path / "r.json", {"minilm": {"torch fp32": 50.0}}), "deberta")
    rates = Rates(model="deberta", cpu={"torch fp32": 10.0}, cpu_threads=2, source="t")
    with pytest.raises(PlanError, match="no measured rate"):
        capacity.plan(100, rates, profile, variant="OpenVINO int8")
    with pytest.raises(PlanError, match="at least 1"):
        capacity.plan(0, rates, profile)


def test_the_cli_prints_the_table_for_1_2_4_8_cpu_workers_and_a_gpu(tmp_path):
    rates = write_rates(tmp_path / "rates.json", {"deberta": {"torch fp32": 8.0, "OpenVINO int8": 25.0}})
    run = subprocess.run(
        [sys.executable, "-m", "citecheck", "plan", "--answers", "20000", "--sentences-per-answer", "6",
         "--rates", str(rates), "--backend", "OpenVINO int8"],
        capture_output=True, text=True, cwd=REPO, timeout=600, check=False,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "20,000 answers/day" in out and "OpenVINO int8" in out
    for column in ("1 CPU", "2 CPU", "4 CPU", "8 CPU", "1 GPU"):
        assert column in out
    assert "airflow pools set nli" in out and '"shards"' in out
    as_json = subprocess.run(
        [sys.executable, "-m", "citecheck", "plan", "--answers", "500", "--rates", str(rates), "--json"],
        capture_output=True, text=True, cwd=REPO, timeout=600, check=False,
    )
    assert as_json.returncode == 0, as_json.stderr
    doc = json.loads(as_json.stdout)
    assert doc["answers"] == 500 and set(doc["scenarios"]) == {"no dedupe", "dedupe", "dedupe + cache"}
    assert doc["rates_estimate"] is False and doc["rates_source"].startswith(str(rates))  # --rates overrides
    both = subprocess.run(
        [sys.executable, "-m", "citecheck", "plan", "--answers", "500", "--rates", str(rates), "--judge", "j.json"],
        capture_output=True, text=True, cwd=REPO, timeout=600, check=False,
    )
    assert both.returncode == 2 and "at most one of --rates" in both.stderr


def _newest_bench_rates() -> tuple[Path, dict]:
    found = [(p, json.loads(p.read_text(encoding="utf-8"))) for p in (REPO / "bench/results").glob("nli_rates*.json")]
    return max(found, key=lambda f: f[1]["measured_at"])


def test_the_package_ships_the_newest_measured_rates():
    """features/data/ holds a copy of the newest rates file of bench/results/, nothing else."""
    newest, _ = _newest_bench_rates()
    shipped = sorted((REPO / "include/citecheck/features/data").glob("nli_rates*.json"))
    assert [p.name for p in shipped] == [newest.name], "copy the newest bench/results rates into features/data/"
    assert shipped[0].read_bytes() == newest.read_bytes()


@pytest.mark.parametrize("premise", ["windows", "chunks"])
def test_without_rates_the_plan_sizes_on_the_shipped_rates_and_says_so(premise):
    """README: `citecheck plan --answers N [--premise chunks]` runs as written."""
    newest, doc = _newest_bench_rates()
    args = [sys.executable, "-m", "citecheck", "plan", "--answers", "20000", "--premise", premise]
    run = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=600, check=False)
    assert run.returncode == 0, run.stderr
    rates_line = next(line for line in run.stdout.splitlines() if line.startswith("rates: "))
    assert rates_line.startswith("rates: ESTIMATE") and "not measured on this machine" in rates_line
    assert f"bench/results/{newest.name}" in rates_line and doc["measured_at"] in rates_line
    assert doc["cpu"] in rates_line  # where it was measured
    as_json = json.loads(subprocess.run([*args, "--json"], capture_output=True, text=True, cwd=REPO, timeout=600,
                                        check=True).stdout)
    assert as_json["rates_estimate"] is True and as_json["answers"] == 20000
    measured = doc["pairs_per_second"]["deberta"]
    assert as_json["variant"] in measured
    if premise == "windows":
        assert as_json["cpu_pairs_per_second"] == measured[as_json["variant"]]
    else:  # the measured chunk rate, carried to the sample's chunk length
        assert as_json["cpu_rate_note"].startswith("measured on chunk pairs")
    assert capacity.packaged_rates("minilm").cpu == doc["pairs_per_second"]["minilm"]
    with pytest.raises(PlanError, match="no rates for model 'bert'"):
        capacity.packaged_rates("bert")


def test_a_judge_file_is_timed_here_in_a_short_calibration_run(tmp_path, profile):
    from helpers.tiny_models import save_tiny_nli

    model = save_tiny_nli(tmp_path / "tiny")
    judge_file = tmp_path / "nli.json"
    judge_file.write_text(json.dumps({"kind": "nli", "model": str(model), "quantize": "int8"}), encoding="utf-8")
    rates = capacity.calibrate(judge_file, pairs=32)
    assert list(rates.cpu) == ["torch-int8"] and rates.cpu["torch-int8"] > 0
    assert "calibration run" in rates.source
    assert capacity.plan(100, rates, profile)["variant"] == "torch-int8"
    (tmp_path / "llm.json").write_text('{"kind": "recorded", "judgments": []}', encoding="utf-8")
    with pytest.raises(PlanError, match="not an NLI judge file"):
        capacity.calibrate(tmp_path / "llm.json")


def test_the_committed_bench_rates_size_on_the_fastest_faithful_variant():
    """bench/results holds the rates docs/scaling.md's plan was printed from: the plan reads them."""
    rates = capacity.rates_from_file(REPO / "bench/results/nli_rates_deberta_epyc-avx2_2026-12-01.json", "deberta")
    assert set(rates.cpu) >= {"torch fp32", "ONNX fp32", "ONNX int8", "OpenVINO fp32", "OpenVINO int8"}
    fastest = max(rates.cpu, key=rates.cpu.__getitem__)
    assert rates.fastest_faithful() == fastest and (rates.flip_share or {})[fastest] <= capacity.FAITHFUL_FLIPS
    assert capacity.fastest_faithful({"a": 10.0, "b": 20.0}, {"a": 0.0, "b": 0.02}) == "a"
