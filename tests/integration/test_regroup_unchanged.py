"""The bundled sample days publish, and `score` prints, exactly what they did before the regroup.

The baseline (`tests/fixtures/sample_days_published.json`) was recorded from the code before the
"one house" regroup: digests of the published `daily_metrics`, `sentence_verdicts` and
`citation_verdicts` of three sample days, and of the CLI `score` output for the same turns. Columns,
metrics and built-in slices (`language`) added since are outside the digest; any change to a recorded row fails here.
"""

from __future__ import annotations

import hashlib
import json

from citecheck.cli import main
from helpers import load_fixture
from helpers.published import SLICES_ADDED_SINCE, published_digest

BASELINE = load_fixture("sample_days_published.json")


def _sha(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def test_sample_days_publish_the_recorded_rows_and_score_prints_the_recorded_output(tmp_path, monkeypatch, capsys):
    import sqlalchemy as sa

    days = BASELINE["days"]
    sample = tmp_path / "sample"
    assert main(["sample", "--start", days[0], "--days", str(len(days)), "--out", str(sample)]) == 0
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", f"sqlite:///{tmp_path}/wh.sqlite")
    monkeypatch.setenv("CITECHECK_JUDGE", str(sample / "judge.json"))
    monkeypatch.setenv("CITECHECK_CONFIG", str(sample / "config.toml"))
    assert main(["load-sample", "--start", days[0], "--days", str(len(days))]) == 0
    assert main(["backfill", "--from", days[0], "--to", days[-1]]) == 0
    engine = sa.create_engine(f"sqlite:///{tmp_path}/wh.sqlite")
    assert published_digest(engine, set(BASELINE["metrics"])) == BASELINE["digest"]

    out = tmp_path / "score.json"
    assert main(["score", "--turns", str(sample / "turns.jsonl"), "--judge", str(sample / "judge.json"),
                 "--config", str(sample / "config.toml"), "--out", str(out)]) == 1  # the sample's bad lines
    capsys.readouterr()
    scored = json.loads(out.read_text())
    recorded = BASELINE["score_cli"]
    keys, sentence_keys = recorded["row_keys"], recorded["sentence_keys"]
    recorded_metrics = set(BASELINE["metrics"])  # metrics added since are outside the digest
    rows = sorted(({k: r.get(k) for k in keys} for r in scored["rows"]
                   if r["metric"] in recorded_metrics and r["slice_name"] not in SLICES_ADDED_SINCE),
                  key=lambda r: json.dumps(r, sort_keys=True))
    assert (len(rows), _sha(rows)) == (recorded["rows"], recorded["rows_sha256"])
    assert len(scored["skipped"]) == recorded["skipped"]
    turns = [{"turn_id": t["turn_id"], "is_refusal": t["is_refusal"],
              "sentences": [{k: s.get(k) for k in sentence_keys} for s in t["sentences"]]} for t in scored["turns"]]
    assert _sha(turns) == recorded["turns_sha256"]
