"""A warehouse filled the way a team's would be: `citecheck load-sample` (with its recorded judge,
`--write-judge`) then `citecheck backfill` over a range of days, through the real CLI."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path


def backfill_sample(url: str, workdir: Path, start: str, days: int, turns_per_day: int = 40,
                    claims_days: int = 0) -> list[str]:
    """Fill the warehouse at `url` with `days` sample days from `start`; the days, ISO. The last
    `claims_days` of them are run in the rule claims mode (`load-sample --claims`, `[claims] mode =
    "rules"`), the others in sentence mode."""
    from citecheck import demo

    workdir.mkdir(parents=True, exist_ok=True)
    judge = workdir / "sample-judge.json"
    first = dt.date.fromisoformat(start)
    last = first + dt.timedelta(days=days - 1)
    env = {**os.environ, "CITECHECK_WAREHOUSE_URL": url, "CITECHECK_JUDGE": str(judge)}
    env.pop("CITECHECK_CONFIG", None)
    steps: list[tuple[list[str], dict[str, str]]] = [
        (["init-warehouse"], env),
        (["load-sample", "--start", start, "--days", str(days), "--turns-per-day", str(turns_per_day),
          "--write-judge", str(judge), *(["--claims"] if claims_days else [])], env)]
    sentence_last = last - dt.timedelta(days=claims_days)
    if claims_days < days:
        steps.append((["backfill", "--from", start, "--to", sentence_last.isoformat()], env))
    if claims_days:
        config = workdir / "claims-config.toml"
        config.write_text(demo.config_toml(claims=True), encoding="utf-8")
        steps.append((["backfill", "--from", (sentence_last + dt.timedelta(days=1)).isoformat(), "--to",
                       last.isoformat()], {**env, "CITECHECK_CONFIG": str(config)}))
    for args, step_env in steps:
        done = subprocess.run([sys.executable, "-m", "citecheck", *args], env=step_env, cwd=workdir,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"citecheck {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return [(first + dt.timedelta(days=i)).isoformat() for i in range(days)]
