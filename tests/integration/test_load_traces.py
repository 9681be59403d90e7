"""`citecheck load-traces` into the warehouse (SQLite and PostgreSQL): a demo day played through
the real, instrumented SDKs (tests/helpers/traced_app.py) loads as turns that publish the same
metric rows as the same day loaded as turn rows; a reload is idempotent by (trace id, span id), a
later file adds only the new traces' turns, and every batch is in the load ledger."""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import subprocess
import sys

import pytest
import sqlalchemy as sa

from citecheck import demo, job
from citecheck import warehouse as W
from citecheck.demo.judgments import judge_spec
from citecheck.warehouse import tables as T
from helpers import REPO
from helpers.published import published_rows
from helpers.traced_app import BROKEN_KINDS, TracedApp, broken_lines, langfuse_export, playable

DAY = dt.date(2026, 11, 23)


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    """The demo day (markers and Anthropic-native turns), its judge, and its traces: OTLP JSON
    (each markers turn through OpenInference or the OpenTelemetry GenAI instrumentation, by turn)
    and a Langfuse export."""
    sample = demo.generate(DAY, 1, 40, seed=3, provider_turns=4)
    turns = [t for t in sample.turns if playable(t)]
    folder = tmp_path_factory.mktemp("traces")
    with TracedApp() as app:
        app.play(turns, lambda t: "otel-genai" if int(t["answered_at"][17:19]) % 2 else "openinference")
        lines = app.otlp_lines(spans_per_line=20)
    (folder / "day.otlp.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "day.langfuse.jsonl").write_text("\n".join(langfuse_export(turns)) + "\n")
    return {"turns": turns, "judge": judge_spec(sample), "folder": folder, "lines": lines}


def _cli(url: str, *args: str) -> tuple[int, dict]:
    env = dict(os.environ, CITECHECK_WAREHOUSE_URL=url, PYTHONPATH=str(REPO / "include"))
    env.pop("CITECHECK_CONFIG", None)
    done = subprocess.run([sys.executable, "-m", "citecheck", "load-traces", *args], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _ledger(engine) -> list[tuple[str, int]]:
    with engine.connect() as conn:
        loads = conn.execute(sa.select(T.source_loads).order_by(T.source_loads.c.load_id))
        return [(r.kind, r.row_count) for r in loads]


def test_a_day_from_traces_publishes_what_the_same_turns_as_rows_publish(day, tmp_path):
    url = f"sqlite:///{tmp_path}/traces.sqlite"
    code, report = _cli(url, "--file", str(day["folder"] / "day.otlp.jsonl"))
    assert code == 0 and report["loaded"] == len(day["turns"]) and not report["problems"]
    assert report["label_sources"] == {DAY.isoformat(): {"prompt": len(day["turns"])}}
    traced = W.make_engine(url)
    with traced.connect() as conn:
        stored = {(r.conversation_id, r.answered_at.replace(tzinfo=None)): r
                  for r in conn.execute(sa.select(T.source_turns))}
    rows = []
    for turn in day["turns"]:  # the app's own log of the same turns, with what the trace adds as attributes
        row = copy.deepcopy(turn)
        match = stored[(turn["conversation_id"], dt.datetime.fromisoformat(turn["answered_at"][:19]))]
        row["attributes"] = match.attributes
        if match.attributes["convention"] == "otel-genai":  # its retrieval documents are ids and scores only
            for p in row.get("context") or []:
                p.update(source=None, document_id=None, version=None)
        rows.append(row)
    assert {r.attributes["convention"] for r in stored.values()} == {"openinference", "otel-genai"}
    assert sum(r.answer_format == "anthropic_blocks" for r in stored.values()) >= 1
    as_rows = W.make_engine(f"sqlite:///{tmp_path}/rows.sqlite")
    W.init_warehouse(as_rows)
    W.load_turns(as_rows, rows)
    settings = job.JobSettings(judge_spec=day["judge"], unjudged_limit=1.0)
    for engine in (traced, as_rows):
        job.run_day(engine, DAY, settings)
    metrics = published_rows(traced, "daily_metrics")
    assert len(metrics) > 500 and metrics == published_rows(as_rows, "daily_metrics")
    assert {r["slice_value"] for r in metrics if r["slice_name"].endswith("label_source")} == {"prompt"}


def test_reloading_is_idempotent_and_a_later_file_adds_only_new_traces(day, engine, tmp_path):
    url = engine.url.render_as_string(hide_password=False)
    lines = day["lines"]
    first, later = tmp_path / "a.otlp.jsonl", tmp_path / "b.otlp.jsonl"
    first.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    later.write_text("\n".join(lines[len(lines) // 2:]) + "\n")
    code, one = _cli(url, "--file", str(first))
    assert one["loaded"] > 0 and set(one["not_loaded"]) <= {"parent_missing", "no_answer"}  # a trace cut in two
    code, both = _cli(url, "--file", str(tmp_path / "*.otlp.jsonl"))  # the day's files: a glob
    assert code == 0 and both["already_loaded"] == one["loaded"]
    assert both["loaded"] == len(day["turns"]) - one["loaded"] > 0
    code, again = _cli(url, "--file", str(first), "--file", str(later))
    assert code == 0 and again["loaded"] == 0 and again["already_loaded"] == len(day["turns"])
    assert _ledger(engine) == [("turns", one["loaded"]), ("turns", both["loaded"])]  # nothing written twice
    with engine.connect() as conn:
        stored = conn.execute(sa.select(T.source_turns.c.conversation_id, T.source_turns.c.answered_at,
                                        T.source_turns.c.turn_index, T.source_turns.c.load_id)).all()
    last_load = max(r.load_id for r in stored)
    for row in (r for r in stored if r.load_id == last_load):  # numbered after every earlier turn of its chat
        earlier = [r for r in stored if r.conversation_id == row.conversation_id and r.answered_at < row.answered_at]
        assert row.turn_index == 1 + len(earlier)


def test_a_langfuse_export_loads(day, engine):
    url = engine.url.render_as_string(hide_password=False)
    code, report = _cli(url, "--file", str(day["folder"] / "day.langfuse.jsonl"), "--convention", "langfuse")
    markers = [t for t in day["turns"] if (t.get("answer_format") or "markers") == "markers"]
    assert code == 0 and report["format"] == "langfuse" and report["loaded"] == len(markers)


def test_the_core_install_reads_a_langfuse_export_without_protobuf(day):
    """The protobuf classes are the `traces` extra's: the core package reads Langfuse files and
    imports nothing of OpenTelemetry or protobuf until an OTLP file is read."""
    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('google', 'opentelemetry'):
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
from citecheck.core.config import load_config
from citecheck.core.traces import read_traces
read = read_traces(open({str(day['folder'] / 'day.langfuse.jsonl')!r}, 'rb'), load_config(None).marker_re)
print(len(read.assembled.turns))
"""
    done = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(REPO / "include")),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 0


def test_bad_input_is_counted_and_the_rest_loads(day, engine, tmp_path):
    text, _ = broken_lines(day["lines"])
    path = tmp_path / "broken.otlp.jsonl"
    path.write_text("\n".join(text) + "\n")
    code, report = _cli(engine.url.render_as_string(hide_password=False), "--file", str(path))
    assert code == 1 and report["not_loaded"] == dict.fromkeys(sorted(BROKEN_KINDS), 1)
    assert report["loaded"] == len(day["turns"]) - 3  # three traces skipped; the one that lost a span loads
    assert all(p["reason"] for p in report["problems"])


def test_the_daily_dag_loads_the_configured_traces_first(day, engine, tmp_path):
    from citecheck.core.config import config_from_mapping
    from citecheck.job.traces import load_configured_traces

    assert load_configured_traces(engine, config_from_mapping({})) is None
    (tmp_path / f"{DAY}.otlp.jsonl").write_text("\n".join(day["lines"]) + "\n")
    config = config_from_mapping({"source": {"traces": str(tmp_path / "{day}*.jsonl")}})
    assert load_configured_traces(engine, config, DAY - dt.timedelta(days=1)) == {"files": [], "loaded": 0,
                                                                                  "problems": []}
    report = load_configured_traces(engine, config, DAY)
    assert report["loaded"] == len(day["turns"])
    with engine.connect() as conn:
        assert W.count_day_turns(conn, DAY) == len(day["turns"])
    nothing = load_configured_traces(engine, config_from_mapping({"source": {"traces": str(tmp_path / "none-*")}}))
    assert nothing == {"files": [], "loaded": 0, "problems": []}


def test_no_matching_file_is_a_usage_error(engine, tmp_path):
    env = dict(os.environ, CITECHECK_WAREHOUSE_URL=engine.url.render_as_string(hide_password=False),
               PYTHONPATH=str(REPO / "include"))
    done = subprocess.run([sys.executable, "-m", "citecheck", "load-traces", "--file", str(tmp_path / "none-*.jsonl")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no trace file matches" in done.stderr
