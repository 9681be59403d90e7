"""Load speed of `citecheck load-traces`: spans per second, reading (OTLP JSON through the protobuf
classes, conventions, assembling turns) and loading (into a fresh SQLite warehouse, the ledger and
all) measured apart.

The traces are a demo day played through the real, instrumented SDKs (tests/helpers/traced_app.py:
OpenInference and OpenTelemetry GenAI, a retriever span each), then copied under new trace and span
ids until the file holds `--traces` traces. Usage:
  PYTHONPATH=include:tests .venv/bin/python bench/bench_load_traces.py [--traces 20000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "include"), str(REPO / "tests")]


def _copies(lines: list[str], traces: int) -> list[str]:
    """The lines again and again, each copy's trace and span ids made new, until `traces` traces."""
    per_copy = len({s["traceId"] for line in lines for rs in json.loads(line)["resourceSpans"]
                    for ss in rs["scopeSpans"] for s in ss["spans"]})
    out = []
    for n in range(-(-traces // per_copy)):
        tag = f"{n:08x}"
        for line in lines:
            request = json.loads(line)
            for rs in request["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for s in ss["spans"]:
                        for key in ("traceId", "spanId", "parentSpanId"):
                            if s.get(key):
                                s[key] = tag + s[key][8:]
            out.append(json.dumps(request))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=20000)
    args = parser.parse_args()
    from bench_hot_spots import cpu_name

    from citecheck import demo
    from citecheck import warehouse as W
    from citecheck.core.config import load_config
    from citecheck.core.traces import read_traces
    from citecheck.job.traces import load_trace_files
    from helpers.traced_app import TracedApp

    day = dt.date(2026, 11, 23)
    turns = demo.generate(day, 1, 100, seed=5, provider_turns=4).turns
    with TracedApp() as app:
        app.play(turns, lambda t: "otel-genai" if int(t["answered_at"][17:19]) % 2 else "openinference")
        lines = _copies(app.otlp_lines(), args.traces)
    config = load_config(None)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "traces.otlp.jsonl"
        path.write_text("\n".join(lines) + "\n")
        size = path.stat().st_size
        started = time.perf_counter()
        read = read_traces(path.read_bytes().splitlines(), config.marker_re)
        reading = time.perf_counter() - started
        engine = W.make_engine(f"sqlite:///{folder}/warehouse.sqlite")
        W.init_warehouse(engine)
        started = time.perf_counter()
        report = load_trace_files(engine, [str(path)], config)
        loading = time.perf_counter() - started
    spans = read.spans
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}")
    print(f"file: {len(lines)} lines, {size / 1e6:.1f} MB, {spans} spans, {len(read.assembled.turns)} traces "
          f"({len(read.assembled.skipped)} skipped)")
    print(f"read + assemble: {reading:.1f} s, {spans / reading:,.0f} spans/s")
    print(f"load-traces into SQLite (read, assemble, store): {loading:.1f} s, {spans / loading:,.0f} spans/s, "
          f"{report['loaded']} turns loaded")


if __name__ == "__main__":
    main()
