"""What every command module shares: the exit codes, writing JSON, the warehouse and the
configuration of the environment, the job settings of a command's flags."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_SKIPPED = 1  # finished, but some input lines or turns were skipped
EXIT_USAGE = 2  # bad usage, configuration or judge file: nothing was done
EXIT_VALIDATION_FAILED = 3  # a day's output broke an expectation: nothing of it was published
EXIT_DECISION_FAILED = 3  # `gate`: the release decision is fail or no_data (same code: CI stops on both)
EXIT_DAY_LOCKED = 4  # another run holds the day (waited --lock-wait seconds, or not at all)
EXIT_WAREHOUSE_ERROR = 5  # the warehouse failed (unreachable, a statement refused): see the one-line message
EXIT_INTERNAL_ERROR = 6  # the command itself failed unexpectedly (a bug): one line, `--debug` for the traceback


def write_json(payload: Any, out: str | None) -> None:
    """`payload` as indented JSON to the file `out`, or to stdout."""
    text = json.dumps(payload, indent=2, ensure_ascii=False, default=str)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")
    else:
        sys.stdout.write(text + "\n")


def error(message: str) -> None:
    """One `citecheck: error: …` line on stderr."""
    sys.stderr.write(f"citecheck: error: {message}\n")


def warehouse():
    """The warehouse of CITECHECK_WAREHOUSE_URL (schemas from the config), initialised."""
    from citecheck.warehouse import engine_for, init_warehouse

    engine = engine_for()
    init_warehouse(engine)
    return engine


def env_config():
    """The configuration of CITECHECK_CONFIG (defaults without one)."""
    import os

    from citecheck.core.config import load_config

    return load_config(os.environ.get("CITECHECK_CONFIG") or None)


def job_settings(args: argparse.Namespace):
    """The job settings of the environment, overridden by the command's job flags."""
    from citecheck.job import settings_from_env

    params = {k: getattr(args, k, None)
              for k in ("nli_share", "shards", "llm_sample_rate", "llm_budget_usd", "min_turns", "lock_wait_s")}
    return settings_from_env(params)
