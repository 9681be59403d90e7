"""Command line: `python -m citecheck COMMAND …`, one module per command group.

Exit codes (named in `cli.common`, the table is in the README): 0 success; 1 the run finished
but some input lines were skipped (see `skipped`); 2 bad usage, configuration or judge file
(nothing was scored); 3 a day failed validation (nothing of it was published); 4 the day is
locked by another run (nothing was done; the message names the holder); 5 a warehouse error (one
line says what failed, the run and what to do; `--debug` prints the traceback); 6 the command
itself failed unexpectedly (a bug: one line names the error, `--debug` prints the traceback; never 1,
which a CI step may allow).

- `options`: the options several commands share, each defined once, and the argument types
- `common`: exit codes, JSON output, the warehouse and configuration of the environment
- `scoring`: score, parse, compare, gate, calibrate, plan (files, no warehouse needed)
- `loading`: sample, load-sample, load-turns, load-traces, load-events
- `admin`: init-warehouse, grant-bi, ddl
- `daily`: run, backfill, stale, runs, gc (the daily job)
- `outputs`: metrics, report, alerts, suggestions (a published day)
- `review`: review export|import|report|publish
- `bi`: bi dbt|dbt-profile|superset
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from citecheck.cli import admin, bi, daily, loading, outputs, review, scoring
from citecheck.cli.common import (
    EXIT_DAY_LOCKED,
    EXIT_INTERNAL_ERROR,
    EXIT_OK,
    EXIT_SKIPPED,
    EXIT_USAGE,
    EXIT_VALIDATION_FAILED,
    EXIT_WAREHOUSE_ERROR,
    error,
)

__all__ = ["EXIT_DAY_LOCKED", "EXIT_INTERNAL_ERROR", "EXIT_OK", "EXIT_SKIPPED", "EXIT_USAGE", "EXIT_VALIDATION_FAILED",
           "EXIT_WAREHOUSE_ERROR", "build_parser", "main"]

# Every command, in the order `citecheck --help` lists them; each group module registers its own.
COMMANDS = (
    scoring.add_score, scoring.add_parse, scoring.add_compare, scoring.add_gate, scoring.add_calibrate,
    loading.add_sample, admin.add_init_warehouse, loading.add_load_sample, loading.add_load_turns,
    loading.add_load_traces, loading.add_load_events, daily.add_stale, daily.add_run, daily.add_backfill,
    daily.add_runs, daily.add_gc,
    outputs.add_metrics, outputs.add_report, outputs.add_alerts, outputs.add_suggestions,
    review.add_review, admin.add_grant_bi, scoring.add_plan, bi.add_bi, admin.add_ddl,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="citecheck", description="Citation quality metrics for assistant answers.")
    parser.add_argument("--debug", action="store_true", help="print the traceback of a warehouse or lock error")
    sub = parser.add_subparsers(dest="command", required=True)
    for add_command in COMMANDS:
        add_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    import logging

    import sqlalchemy as sa

    from citecheck.core.config import ConfigError
    from citecheck.job import RunFailed
    from citecheck.judges import JudgeSpecError
    from citecheck.warehouse.locks import DayLocked
    from citecheck.warehouse.naming import InvalidName

    args = build_parser().parse_args(argv)
    try:
        code = args.func(args)
        sys.stdout.flush()  # a reader that went away (`citecheck runs | head`) is found here, not at exit
        return code
    except BrokenPipeError:
        return _reader_gone()
    except (ConfigError, JudgeSpecError, InvalidName, FileNotFoundError) as exc:
        error(str(exc))
        return EXIT_USAGE
    except DayLocked as exc:
        return _operator_error(args, exc, str(exc), EXIT_DAY_LOCKED)
    except RunFailed as exc:
        return _operator_error(args, exc, str(exc), EXIT_WAREHOUSE_ERROR)
    except sa.exc.SQLAlchemyError as exc:
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        line = (f"{args.command}: the warehouse failed ({cause[0][:300] if cause else type(exc).__name__}); check "
                f"CITECHECK_WAREHOUSE_URL and that the warehouse is up (and initialised: init-warehouse), then rerun")
        return _operator_error(args, exc, line, EXIT_WAREHOUSE_ERROR)
    except Exception as exc:  # a bug: its own code, never EXIT_SKIPPED's 1 that a CI step may allow
        line = (f"{args.command}: unexpected error ({type(exc).__name__}: {str(exc)[:300]}); "
                f"rerun with --debug for the traceback and report it")
        return _operator_error(args, exc, line, EXIT_INTERNAL_ERROR)
    finally:
        logging.getLogger("citecheck").debug("command %s done", getattr(args, "command", None))


def _reader_gone() -> int:
    """stdout's reader closed the pipe (`| head`): the output it wanted was written; end quietly,
    with stdout pointed at /dev/null so the interpreter's last flush has nowhere to fail."""
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK


def _operator_error(args: argparse.Namespace, exc: BaseException, line: str, code: int) -> int:
    """One readable line on stderr; the traceback in the log (logger `citecheck`) and, with
    `--debug`, on stderr too."""
    import logging
    import traceback

    logging.getLogger("citecheck").debug("citecheck %s failed", args.command, exc_info=exc)
    if args.debug:
        traceback.print_exception(exc, file=sys.stderr)
    error(line)
    return code
