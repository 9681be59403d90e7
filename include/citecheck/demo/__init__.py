"""Bundled sample data: days of realistic assistant traffic, and recorded judgments for it.

An internal-policy assistant answers questions on travel and expenses, the IT help desk, HR leave,
the returns policy, security and facilities from a small knowledge base (`data/*.json`). Each
answer is built sentence by sentence from claims that paraphrase facts of one passage, and each
sentence is drawn as one of the failure kinds of SPEC §3–§5 at a realistic rate
(`data/traffic.toml`), so the job has something to find. A claim's wording is a function of where
its supporting passage sits (see `citecheck.demo.knowledge`), so `full_judge_spec()` lists every
statement the generator can ever write: one judge file serves any date range.

Dated step changes (`[[changes]]` in `data/traffic.toml`, or the `changes` argument of
`generate`) change the citation habits from a day on: the bundled one, from 2026-11-30, pads
citations and invents labels, for the monitor to find. Days before a change are generated exactly
as without it. Each day depends only on (seed, date, the change in force); standard library only.

Modules: `knowledge` (passages, claims, wording), `dialogue` (refusals, offers, questions),
`traffic` (weights, step changes), `answers` (markers answers), `native` (provider-native
answers), `judgments` (expected verdicts, recorded judges), `days` (conversations, days,
`generate`), `files` (turns, judge and config on disk).
"""

from citecheck.demo.answers import marker_style
from citecheck.demo.days import MALFORMED_KINDS, DayTurn, Sample, conversation, faq_turn, generate, start_time
from citecheck.demo.dialogue import OFFERS, REFUSAL_SENTENCES, USER_QUESTIONS
from citecheck.demo.files import (
    SampleFiles,
    config_toml,
    loadable_malformed,
    nli_pairs,
    plan_traffic,
    sample_config,
    sample_files,
    sample_settings,
    write_judge,
    write_sample,
    write_turns_jsonl,
)
from citecheck.demo.judgments import KINDS, ExpectedSentence, full_judge_spec, judge_spec
from citecheck.demo.traffic import BUNDLED_CHANGES, StepChange, change_on

__all__ = [
    "BUNDLED_CHANGES", "KINDS", "MALFORMED_KINDS", "OFFERS", "REFUSAL_SENTENCES", "USER_QUESTIONS", "DayTurn",
    "ExpectedSentence", "Sample", "SampleFiles", "StepChange", "change_on", "config_toml", "conversation",
    "faq_turn", "full_judge_spec", "generate", "judge_spec", "loadable_malformed", "marker_style", "nli_pairs",
    "plan_traffic", "sample_config", "sample_files",
    "sample_settings", "start_time", "write_judge", "write_sample", "write_turns_jsonl",
]
