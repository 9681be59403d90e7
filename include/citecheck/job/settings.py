"""What a run of the daily job depends on, and the judges built from it.

`JobSettings` holds the judge file, the scoring rules, the judged share and the limits; its
`run_config_hash` is stored with every output row, so a backfill knows which days are current.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from sqlalchemy.engine import Engine

from citecheck.core.config import Config, ConfigError, layer_section, load_config, register_section
from citecheck.core.criteria import GATE_SECTION, Criteria, CriteriaError, load_criteria_file, parse_criteria
from citecheck.core.selection import Selection
from citecheck.job.validation import DEFAULT_MIN_TURNS, min_turns_setting
from citecheck.judges import judge_from_spec, read_judge_file

DEFAULT_JUDGE_SPEC: dict[str, Any] = {"kind": "nli", "model": "cross-encoder/nli-deberta-v3-base"}


@dataclass(frozen=True)
class JobSettings:
    """Everything a run depends on; its hash is stored with every output row."""

    judge_spec: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_JUDGE_SPEC))
    config: Config = field(default_factory=Config)
    nli_share: float = 1.0
    shards: int = 4
    salt: str = "citecheck-v1"
    unjudged_limit: float = 0.2
    llm_sample_rate: float | None = None
    llm_budget_usd: float | None = None
    # A day with fewer scored turns fails validation (an empty or missing day is never published);
    # a gate, not an input of the rows, so it is not part of `run_config_hash`.
    min_turns: int = DEFAULT_MIN_TURNS
    # One run per day at a time (`citecheck.warehouse.locks`): how long a second run of a locked day
    # waits before it refuses (0: at once), and the lease every step renews. Not inputs of the rows.
    lock_wait_s: float = 0.0
    lock_lease_s: float = 600.0
    # The acceptance criteria every published day is decided on (SPEC §5.1): the config's
    # [[criteria]] unless given (a criteria file). Not an input of the metric rows, so not part of
    # `run_config_hash`; their own hash is stored with every decision.
    criteria: Criteria = field(default_factory=Criteria)

    def __post_init__(self) -> None:
        if isinstance(self.shards, bool) or not isinstance(self.shards, int) or self.shards < 1:
            raise ConfigError(f"job.shards: the shards of a day are a whole number, at least 1; got {self.shards!r}")
        object.__setattr__(self, "min_turns", min_turns_setting(self.min_turns))
        check_config_sections(self.config)
        check_llm_claims(self.judge_spec, self.config)
        in_config, gate = self.config.extra.get("criteria"), self.config.extra.get(GATE_SECTION)
        if in_config is not None or gate is not None:
            if self.criteria.source not in ("", "config"):
                raise CriteriaError("criteria are given twice: in the config's [[criteria]] / [gate] and in "
                                  f"{self.criteria.source}")
            object.__setattr__(self, "criteria", parse_criteria(in_config, "config", gate))

    def effective_judge_spec(self) -> dict[str, Any]:
        """The judge spec with the run's LLM sample rate and budget applied to a cascade."""
        spec = json.loads(json.dumps(self.judge_spec))
        if spec.get("kind") == "cascade":
            escalate = spec.setdefault("escalate", {})
            if self.llm_sample_rate is not None:
                escalate["sample_rate"] = self.llm_sample_rate
            if self.llm_budget_usd is not None:
                escalate["budget_usd"] = self.llm_budget_usd
        return spec

    @property
    def selection(self) -> Selection:
        """The judged share of the day's turns and its shards (`citecheck.core.selection`)."""
        return Selection(self.nli_share, self.salt, self.shards)

    @property
    def run_config_hash(self) -> str:
        """A short hash of everything the output depends on: the scoring rules' hash, the
        effective judge, the judged share, the salt and the unjudged limit. Stored in the
        `config_hash` column of every output row."""
        blob = json.dumps({
            "config": self.config.rules_hash, "judge": self.effective_judge_spec(), "nli_share": self.nli_share,
            "salt": self.salt, "unjudged_limit": self.unjudged_limit,
        }, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def check_config_sections(config: Config) -> None:
    """Check the config when a run's settings are built, before extract: every layer section
    (`check_layer_sections`) and the claims mode; a typo fails the run at once, not a day late."""
    check_layer_sections(config)
    check_claims_mode(config)


def check_layer_sections(config: Config) -> None:
    """Read every layer section of the config (`core.config.LAYER_SECTIONS`: `[job]`,
    `[warehouse]`, `[source]`, and `[monitor]`, `[report]` that steps after publish read): an unknown key
    (named with the nearest known one) or a bad value raises `ConfigError` (`InvalidName` for a
    warehouse name). The CLI checks every config it loads through here."""
    from citecheck.features.monitor import monitor_settings
    from citecheck.job.traces import source_section
    from citecheck.report import configured_trend_days
    from citecheck.warehouse.naming import warehouse_names

    job_section(config)
    source_section(config)
    warehouse_names(config.extra.get("warehouse"), env={})
    monitor_settings(config)
    configured_trend_days(config)


DURATION_KEYS = ("lock_wait_s", "lock_lease_s")
JOB_KEYS = register_section("job", (*DURATION_KEYS, "shards"))


def job_section(config: Config) -> dict[str, Any]:
    """The `[job]` section: its durations checked (`_seconds`); `shards` as given (JobSettings checks it)."""
    return {k: _seconds(f"job.{k}", v) if k in DURATION_KEYS else v for k, v in layer_section(config, "job").items()}


def check_claims_mode(config: Config) -> None:
    """The daily job splits claims in every mode: `rules` and `recorded` at the structural pass (a
    recorded file is read and checked here, before extract), `llm` right after it with the run's
    LLM judge (`check_llm_claims` checks that judge when the settings are built)."""
    from citecheck.core.claims import splitter_for

    if config.claims_on:
        splitter_for(config)


def check_llm_claims(judge_spec: Mapping[str, Any], config: Config) -> None:
    """`[claims] mode = "llm"` needs an LLM judge to split with: an `anthropic` judge, or a cascade
    escalating to one (its model and budget are the splitter's). Raises `ClaimsError`."""
    from citecheck.core.claims import ClaimsError

    if config.claims_mode != "llm":
        return
    kind = judge_spec.get("kind")
    llm = judge_spec if kind == "anthropic" else judge_spec.get("escalate") if kind == "cascade" else None
    if not isinstance(llm, Mapping):
        raise ClaimsError(f'claims.mode = "llm" splits with the run\'s LLM judge, but the judge is {kind!r}: use an '
                          '"anthropic" judge, or a "cascade" escalating to one')
    if "model" in llm and not (isinstance(llm["model"], str) and llm["model"].strip()):
        raise ClaimsError('claims.mode = "llm": the LLM judge has no model (its "model" is empty)')

PARAMS = tuple(f.name for f in fields(JobSettings) if f.name not in ("judge_spec", "config", "criteria"))


def settings_from_env(params: Mapping[str, Any] | None = None) -> JobSettings:
    """Settings from `CITECHECK_JUDGE` (a judge file), `CITECHECK_CONFIG` (TOML),
    `CITECHECK_CRITERIA` (a criteria file, instead of the config's [[criteria]]),
    `CITECHECK_MIN_TURNS` and DAG params (which win)."""
    params = dict(params or {})
    judge_path = params.pop("judge_file", None) or os.environ.get("CITECHECK_JUDGE")
    spec = read_judge_file(judge_path) if judge_path else dict(DEFAULT_JUDGE_SPEC)
    config = load_config(params.pop("config_file", None) or os.environ.get("CITECHECK_CONFIG") or None)
    criteria_path = params.pop("criteria_file", None) or os.environ.get("CITECHECK_CRITERIA")
    criteria = load_criteria_file(criteria_path) if criteria_path else Criteria()
    values: dict[str, Any] = dict(job_section(config))
    values |= {k: v for k, v in params.items() if k in PARAMS and v is not None}
    values |= {k: _seconds(f"job.{k}", values[k]) for k in DURATION_KEYS if k in values}
    return replace(JobSettings(judge_spec=spec, config=config, min_turns=min_turns_setting(), criteria=criteria),
                   **values)


def _seconds(name: str, value: Any) -> float:
    """A `[job]` duration in seconds: a finite number, at least 0 (`lock_lease_s`: at least
    `locks.MIN_LEASE_S`, a lease the renewals can keep), else a ConfigError."""
    import math

    from citecheck.core.config import ConfigError
    from citecheck.warehouse.locks import MIN_LEASE_S

    floor = MIN_LEASE_S if name == "job.lock_lease_s" else 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < floor:
        raise ConfigError(f"config: {name} must be a number of seconds, finite and at least {floor:g} (got {value!r})")
    return float(value)


def build_judge(engine: Engine, settings: JobSettings, run_id: str, *, stage: str = "first",
                anthropic_api_key: str | None = None, shard: int | None = None) -> Any:
    """The judge of a stage: the first stage of a cascade for shards (`first`), the whole judge
    (`all`: the escalate step), or the whole judge to split claims with (`claims`).

    NLI judges share the warehouse's judgment cache; LLM judges keep their batch ids in the run
    ledger (a first-stage LLM judge of one `shard` under its own key, `<run id>/shard-<n>`) and get
    the Anthropic key as a parameter (else the SDK reads ANTHROPIC_API_KEY). One daily budget: every
    LLM judge of the run (the claim split, each shard, the escalation) takes from the run's pool in
    the ledger (`RunBudgetPool`); one built for judging also shows what the claim split spent
    (`runs.stats["claim_split"]["spend"]`) as booked.
    """
    from citecheck.warehouse.runs import RunBudgetPool, RunStateBatchStore, run_row

    spec = settings.effective_judge_spec()
    if stage == "first" and spec.get("kind") == "cascade":
        spec = spec["first"]
    if stage == "claims" and spec.get("kind") == "cascade":  # the LLM judge alone splits
        from citecheck.judges.cascade import escalation_spec

        spec = escalation_spec(spec)
    options: dict[str, Any] = {"run_id": run_id}
    if spec.get("kind") in ("nli", "cascade"):
        from citecheck.warehouse.judgment_cache import SQLCache

        options["cache"] = SQLCache(engine, create=False)
    llm = spec.get("kind") in ("anthropic", "cascade")
    if llm:
        options["batch_state"] = RunStateBatchStore(engine, run_id)
        options["budget_pool"] = RunBudgetPool(engine, run_id)
        if shard is not None and spec.get("kind") == "anthropic":  # each shard's batch under its own key
            options["run_id"] = f"{run_id}/shard-{shard}"
        if anthropic_api_key:
            options["api_key"] = anthropic_api_key
    judge = judge_from_spec(spec, **options)
    if llm and stage != "claims":
        spend = (((run_row(engine, run_id) or {}).get("stats") or {}).get("claim_split") or {}).get("spend")
        if spend:
            judge.book_spend(float(spend.get("usd", 0.0)), int(spend.get("answers", 0)))
    return judge
