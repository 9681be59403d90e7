"""A warehouse filled the way a team's would be: `citecheck load-sample` (with its recorded judge,
`--write-judge`) then `citecheck backfill` over a range of days, through the real CLI."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path


def backfill_sample(url: str, workdir: Path, start: str, days: int, turns_per_day: int = 40) -> list[str]:
    """Fill the warehouse at `url` with `days` sample days from `start`; the days, ISO."""
    workdir.mkdir(parents=True, exist_ok=True)
    judge = workdir / "sample-judge.json"
    first = dt.date.fromisoformat(start)
    last = first + dt.timedelta(days=days - 1)
    env = {**os.environ, "CITECHECK_WAREHOUSE_URL": url, "CITECHECK_JUDGE": str(judge)}
    env.pop("CITECHECK_CONFIG", None)
    for args in (["init-warehouse"],
                 ["load-sample", "--start", start, "--days", str(days), "--turns-per-day", str(turns_per_day),
                  "--write-judge", str(judge)],
                 ["backfill", "--from", start, "--to", last.isoformat()]):
        done = subprocess.run([sys.executable, "-m", "citecheck", *args], env=env, cwd=workdir,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"citecheck {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return [(first + dt.timedelta(days=i)).isoformat() for i in range(days)]
