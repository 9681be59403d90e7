"""`citecheck score` and `citecheck load-turns` take every native format from a JSONL file;
`score --summary` prints the native citations' figures."""

from __future__ import annotations

import json

import sqlalchemy as sa

from citecheck.cli import main
from helpers import load_fixture


def _write(tmp_path, name):
    data = load_fixture(name)
    turns = tmp_path / f"{name}.jsonl"
    turns.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in data["turns"]), encoding="utf-8")
    judge = tmp_path / f"{name}.judge.json"
    judge.write_text(json.dumps(data["judge"]))
    return turns, judge, data


def test_score_summary_prints_pointer_problems_by_kind(tmp_path, capsys):
    turns, judge, data = _write(tmp_path, "gemini.json")
    out = tmp_path / "out.json"
    assert main(["score", "--turns", str(turns), "--judge", str(judge), "--summary", "--out", str(out)]) == 0
    line = next(x for x in capsys.readouterr().err.splitlines() if x.startswith("native citations:"))
    expected = data["expected"]["counts"]
    assert f"pointer problems {expected['pointer_problem_citations']} of {expected['citations']} citations" in line
    for key, n in expected.items():
        if key.startswith("pointer_problem_citations_"):
            assert f"{key.removeprefix('pointer_problem_citations_')} {n}" in line
    assert f"no_source_text {expected['no_source_text_sentences']} of" in line
    assert json.loads(out.read_text())["counts"]["pointer_problem_citations"] == expected["pointer_problem_citations"]


def test_load_turns_then_run_takes_every_format(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", f"sqlite:///{tmp_path}/wh.sqlite")
    total = 0
    for name in ("anthropic_locations.json", "openai.json", "cohere_v2.json", "gemini.json"):
        data = load_fixture(name)
        prefix = name.split(".")[0]
        renamed = tmp_path / f"{prefix}.renamed.jsonl"
        renamed.write_text("".join(json.dumps(dict(t, turn_id=f"{prefix}-{t['turn_id']}")) + "\n"
                                   for t in data["turns"]))
        assert main(["load-turns", "--file", str(renamed)]) == 0
        total += len(data["turns"])
    capsys.readouterr()
    engine = sa.create_engine(f"sqlite:///{tmp_path}/wh.sqlite")
    with engine.connect() as conn:
        formats = dict(conn.execute(sa.text(
            "SELECT answer_format, COUNT(*) FROM source_turns GROUP BY answer_format")).all())
        response = conn.execute(sa.text("SELECT response FROM source_turns WHERE turn_id = 'gemini-t1'")).scalar_one()
    assert json.loads(response)["groundingMetadata"]["groundingSupports"]
    assert formats == {"anthropic_blocks": 4, "openai_responses": 2, "openai_chat": 1, "cohere_v2": 2, "gemini": 2}
    assert sum(formats.values()) == total
