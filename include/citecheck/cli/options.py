"""The options several commands share, each defined once: `--day`, `--from`/`--to`, `--json`,
`--out`, `--config`, `--turns`, `--file`, `--format`, `--warehouse-url`, the sample generator's
and the job's flags; and the argument types (a date, a positive whole number, a schema name)."""

from __future__ import annotations

import argparse
import datetime as dt

PROVIDER_TURNS_HELP = ("also generate this many turns a day in the OpenAI, Cohere, Gemini and Anthropic PDF/"
                       "custom-content formats, some with their apps' pointer bugs (default 0: the sample as recorded)")


def parse_day(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text}") from exc


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text}")
    return value


def schema_name(text: str) -> str:
    """A schema name: a plain SQL identifier (`warehouse.naming.identifier`, as `[warehouse] schema` is)."""
    from citecheck.warehouse.naming import InvalidName, identifier

    try:
        return identifier(text, "the schema")
    except InvalidName as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_schema(p: argparse.ArgumentParser, *, default: str | None, help: str) -> None:
    """`--schema`, checked when the command line is read: a bad name exits 2 before anything is written."""
    p.add_argument("--schema", type=schema_name, default=default, help=help)


def days_between(first: dt.date, last: dt.date) -> list[dt.date]:
    """Every day from `first` to `last`, both included."""
    return [first + dt.timedelta(days=i) for i in range((last - first).days + 1)]


def add_day(p: argparse.ArgumentParser, *, required: bool = True, help: str | None = None) -> None:
    p.add_argument("--day", type=parse_day, required=required, help=help)


def add_range(p: argparse.ArgumentParser, *, required: bool = True, from_help: str | None = None) -> None:
    """`--from` (dest `from_`) and `--to`, both days."""
    p.add_argument("--from", dest="from_", type=parse_day, required=required, help=from_help)
    p.add_argument("--to", type=parse_day, required=required)


def add_json(p: argparse.ArgumentParser, help: str | None = None) -> None:
    p.add_argument("--json", action="store_true", help=help)


def add_out(p: argparse.ArgumentParser, *, required: bool = False, help: str | None = None) -> None:
    p.add_argument("--out", required=required, help=help)


def add_config(p: argparse.ArgumentParser, help: str | None = None) -> None:
    p.add_argument("--config", help=help)


def add_turns(p: argparse.ArgumentParser, help: str | None = None) -> None:
    p.add_argument("--turns", required=True, help=help)


def add_file(p: argparse.ArgumentParser) -> None:
    p.add_argument("--file", required=True)


def add_format(p: argparse.ArgumentParser, choices: list[str], *, default: str | None = None,
               help: str | None = None) -> None:
    p.add_argument("--format", choices=choices, default=default, help=help)


def add_warehouse_url(p: argparse.ArgumentParser, help: str | None = None) -> None:
    p.add_argument("--warehouse-url", required=True, help=help)


def add_generator(p: argparse.ArgumentParser) -> None:
    """The sample generator's size and seed (`sample`, `load-sample`)."""
    p.add_argument("--turns-per-day", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--provider-turns", type=int, default=0, help=PROVIDER_TURNS_HELP)
    p.add_argument("--language-turns", type=int, default=0,
                   help="also generate this many turns a day answered in German, French, Spanish and Japanese "
                        "(their own passages, offers, abbreviations and figures; default 0: the sample as recorded)")
    p.add_argument("--topics", action="store_true",
                   help="give every turn a `topic` attribute (pay, leave, travel, …) that criteria can scope on "
                        "(default off: the sample as recorded)")
    p.add_argument("--claims", action="store_true",
                   help="the rule claim splitter on: [claims] mode = \"rules\" in the config, and the recorded "
                        "judge gains a row per claim (default off: the sample as recorded)")


def add_workers(p: argparse.ArgumentParser, help: str) -> None:
    """`--workers N`: processes on this machine (`citecheck.job.workers`)."""
    p.add_argument("--workers", type=_positive_int, default=1, metavar="N", help=help)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"a whole number of processes, at least 1: {text!r}")
    return value


def add_job_params(p: argparse.ArgumentParser) -> None:
    """What a run of the daily job may override (`run`, `backfill`)."""
    p.add_argument("--nli-share", type=float, help="share of turns judged (deterministic hash selection)")
    p.add_argument("--shards", type=int, help="the day's shards: structural, judge and fold steps per shard "
                   "(default [job] shards, else 4)")
    p.add_argument("--llm-sample-rate", type=float)
    p.add_argument("--llm-budget-usd", type=float)
    p.add_argument("--min-turns", type=int, help="fewest scored turns a day needs to publish (default 1, or "
                   "CITECHECK_MIN_TURNS); an emptier day fails validation and keeps what was published")
    p.add_argument("--force", action="store_true", help="rerun days already published with the same config")
    p.add_argument("--lock-wait", dest="lock_wait_s", type=float, metavar="SECONDS",
                   help="how long to wait for a day another run holds (default 0: refuse at once with exit "
                        "code 4; or [job] lock_wait_s)")
