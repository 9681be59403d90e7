"""`--schema` of `bi superset` and `bi dbt-profile` is a plain SQL identifier, as `[warehouse] schema`
is (`warehouse.naming.identifier`): anything else exits 2 with the rule in the message, and nothing
is written (the output folder is not even created)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from citecheck.bi.dbt import profiles_yml
from citecheck.warehouse.naming import InvalidName

BAD_SCHEMAS = ("x; DROP TABLE y", "", "1abc", "public.other", 'a"b', "a" * 64, "naïve")


@pytest.mark.parametrize("command", ["superset", "dbt-profile"])
@pytest.mark.parametrize("schema", BAD_SCHEMAS)
def test_a_bad_schema_exits_2_before_any_file(command: str, schema: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "citecheck", "bi", command, "--warehouse-url",
                           "postgresql://bi:secret@127.0.0.1/warehouse", "--out", str(out), "--schema", schema],
                          capture_output=True, text=True)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "argument --schema: the schema must be a plain SQL identifier" in done.stderr
    assert repr(schema) in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("command", ["superset", "dbt-profile"])
def test_a_plain_schema_is_written(command: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "citecheck", "bi", command, "--warehouse-url",
                           "postgresql://bi@127.0.0.1/warehouse", "--out", str(out), "--schema", "Reporting_2"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert any("schema: Reporting_2" in p.read_text() for p in out.rglob("*.y*ml"))


def test_the_profile_refuses_a_bad_schema_when_called_as_a_library() -> None:
    with pytest.raises(InvalidName, match="the dbt schema must be a plain SQL identifier"):
        profiles_yml("postgresql://bi@127.0.0.1/warehouse", schema="x; DROP TABLE y")
