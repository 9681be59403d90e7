r"""Run configuration: marker syntax, check-worthiness rules, segmentation and slices.

The defaults need no file. A TOML file (read with the standard library) overrides any key:

```toml
[markers]
pattern = '\[(?P<labels>[A-Za-z]{0,3}\d+(?:\s*[,;]\s*[A-Za-z]{0,3}\d+)*)\]'
separator = '\s*[,;]\s*'

[check_worthiness]
refusals = ["I can't find that in the travel policy."]   # exact sentences (normalised)
refusal_patterns = ["^i (?:can(?:no|')t|could(?:n't| not)) find\b"]
non_claim_patterns = ["^let me know\b", "^would you like\b"]  # offers and questions to the user
questions_are_non_claims = true

[segmentation]
abbreviations = ["approx.", "e.g.", "i.e."]  # English (and undetermined): a sentence never ends on one of these
max_answer_chars = 1000000   # a longer answer is skipped with its size as the reason; 0 = no limit
max_citations_per_turn = 5000      # a native answer with more citations is skipped, its count the reason; 0 = no limit
max_citations_per_sentence = 200   # ... or with a sentence carrying more citations than this; 0 = no limit
max_sentences_per_turn = 10000     # an answer of more sentences is skipped, its size the reason (at least 1:
                                   # bounds one answer's memory even with max_answer_chars = 0)

[languages.de]         # any language code (SPEC §2.2; defaults: citecheck.core.language_rules)
abbreviations = ["gem."]   # added to the language's shipped abbreviations
refusals = []              # added to [check_worthiness] refusals for this language
non_claim_patterns = []    # replace the language's shipped patterns (when given)
refusal_patterns = []      # replace the language's shipped patterns (when given)

[slices]
attributes = []        # attribute keys to slice by; empty = every key present
numbers = true         # sentences with / without numbers
multi_citation = true  # sentences with >= 2 citations
max_values_per_key = 50   # an attribute's most frequent values keep their slices, the rest are `other`; 0 = all
length_buckets = [3, 6, 10]   # answer length in sentences: 1-3, 4-6, 7-10, 11+

[day]
timezone = "UTC"
assume_zone = "UTC"    # the zone of a timestamp without one (counted per day), or "refuse"

[claims]
mode = "sentence"      # sentence (each sentence one claim: every output as without claims), rules, llm, recorded
recorded = "claims.json"   # mode = "recorded": {"claims": [{"sentence": TEXT, "claims": [TEXT, ...]}]}
max_claims = 20        # a split into more claims is rejected (the sentence stays one claim)
```
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from citecheck.core.language_rules import DEFAULTS, LanguageRules, shipped_code
from citecheck.core.languages import DEFAULT_LANGUAGE, UNDETERMINED
from citecheck.core.turns import DEFAULT_MAX_ANSWER_CHARS

# One answer's sentences at most (`[segmentation] max_sentences_per_turn`): with the answer text
# itself, what bounds one answer's memory whatever `max_answer_chars` says (tests/unit/test_answer_memory.py).
DEFAULT_MAX_SENTENCES_PER_TURN = 10_000

DEFAULT_MARKER_PATTERN = r"\[(?P<labels>[A-Za-z]{0,3}\d+(?:\s*[,;]\s*[A-Za-z]{0,3}\d+)*)\]"
DEFAULT_LABEL_SEPARATOR = r"\s*[,;]\s*"

DEFAULT_REFUSAL_PATTERNS = (
    r"^(?:i'?m sorry,? (?:but )?)?i (?:can(?:no|')?t|could(?:n't| not)|was(?:n't| not) able to|am unable to)"
    r" (?:find|locate|answer)\b",
    r"^(?:i'?m sorry,? (?:but )?)?(?:the|your|these|those) (?:provided )?(?:documents?|sources?|passages?|context)"
    r" (?:do(?:es)?(?:n't| not)) (?:contain|mention|cover|say)\b",
    # "As an AI language model, I don't have access …": a disclaimer, unless it goes on ("but …").
    r"^as an? (?:ai|artificial intelligence|(?:large )?language model)\b(?![^.]*\b(?:but|however|although)\b)"
    r"[^.]*?\bi (?:do(?:n't| not)|cannot|can't|am (?:not|unable))\b",
)

DEFAULT_NON_CLAIM_PATTERNS = (
    r"^(?:please )?let me know\b",
    r"^(?:would|do) you (?:like|want)\b",
    r"^(?:shall|should) i\b",
    r"^feel free to\b",
    r"^i hope (?:this|that) helps\b",
    r"^(?:i'?m )?happy to help\b",
    r"^if you (?:have|need) (?:any )?(?:more|other|further)? ?(?:questions?|help)\b",
    r"^is there anything else\b",
    r"^(?:i can|i'?d be happy to) help\b",
    r"^(?:hope this helps|good luck)\b",
    r"^(?:sure|certainly|of course|absolutely)\b[,!.]? here (?:is|are)\b",  # a preamble to what follows
    r"^here (?:is|are)\b[^.]*:$",  # a lead-in to a list
    r"^(?:some|a few|other) (?:[\w-]+ ){1,4}(?:include|are):$",  # "Some reasons for this include:"
    r"^(?:[^,]*, )?i(?: would|'d)? (?:recommend|suggest|advise|encourage) (?:you|that you|checking|consulting|"
    r"contacting|referring|visiting|reaching|looking|speaking|asking)\b",  # advice to the user
)

DEFAULT_ABBREVIATIONS = (
    "approx.", "e.g.", "i.e.", "vs.", "cf.", "incl.", "excl.", "esp.", "ca.", "resp.", "viz.", "no.",
    "fig.", "sec.", "art.", "para.", "vol.", "pp.", "p.", "est.", "dept.", "min.", "max.", "a.m.", "p.m.",
)


class ConfigError(ValueError):
    """A configuration file or value that cannot be used."""


@dataclass(frozen=True)
class Config:
    marker_pattern: str = DEFAULT_MARKER_PATTERN
    label_separator: str = DEFAULT_LABEL_SEPARATOR
    refusals: tuple[str, ...] = ()
    refusal_patterns: tuple[str, ...] = DEFAULT_REFUSAL_PATTERNS
    non_claim_patterns: tuple[str, ...] = DEFAULT_NON_CLAIM_PATTERNS
    questions_are_non_claims: bool = True
    abbreviations: tuple[str, ...] = DEFAULT_ABBREVIATIONS
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS  # one such turn would dominate a day's judging
    max_citations_per_turn: int = 5000  # bounded work per answer: beyond it the turn is skipped, its size the reason
    max_citations_per_sentence: int = 200
    max_sentences_per_turn: int = DEFAULT_MAX_SENTENCES_PER_TURN  # bounds one answer's records, whatever its size
    slice_attributes: tuple[str, ...] = ()
    slice_numbers: bool = True
    slice_multi_citation: bool = True
    slice_max_values: int = 50
    length_buckets: tuple[int, ...] = (3, 6, 10)
    timezone: str = "UTC"
    # a timestamp without a zone is read in this zone (counted in the day's input repairs); "refuse":
    # such a turn is malformed (load-turns lists it)
    assume_zone: str = "UTC"
    # `[languages.<code>]` keys, sorted: (code, key, values); `rules_for` resolves them
    languages: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    # SPEC §2.1: the unit below the sentence (`citecheck.core.claims`); "sentence" = no claims
    claims_mode: str = "sentence"
    claims_recorded: str = ""
    claims_max: int = 20
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @cached_property
    def marker_re(self) -> re.Pattern[str]:
        return re.compile(self.marker_pattern)

    @cached_property
    def unclosed_marker_re(self) -> re.Pattern[str] | None:
        """A marker opened and never closed (`parsing.malformed_markers`), for a marker pattern that
        ends in a closing bracket; None for another pattern."""
        if not self.marker_pattern.endswith(r"\]"):
            return None
        return re.compile(self.marker_pattern[:-2] + r"(?![\]\w,;])")

    @cached_property
    def separator_re(self) -> re.Pattern[str]:
        return re.compile(self.label_separator)

    @cached_property
    def _language_rules(self) -> dict[str, LanguageRules]:
        return {}

    def rules_for(self, language: str | None) -> LanguageRules:
        """The segmentation and check-worthiness rules of a language (None: undetermined): the
        shipped defaults of `citecheck.core.language_rules` with its `[languages.<code>]` section;
        English and a language without defaults (the generic rules) use `[segmentation]` and
        `[check_worthiness]`."""
        code = language or UNDETERMINED
        found = self._language_rules.get(code)
        if found is None:
            found = self._language_rules[code] = self._resolve_rules(code)
        return found

    def _resolve_rules(self, code: str) -> LanguageRules:
        found = shipped_code(code)
        shipped = DEFAULTS[found] if found is not None and found != DEFAULT_LANGUAGE else None
        own = {key: values for c, key, values in self.languages if c == code}
        abbreviations = shipped.abbreviations if shipped else self.abbreviations
        non_claims = shipped.non_claim_patterns if shipped else self.non_claim_patterns
        refusal_patterns = shipped.refusal_patterns if shipped else self.refusal_patterns
        return LanguageRules(
            code=code,
            abbreviations=frozenset(a.casefold() for a in (*abbreviations, *own.get("abbreviations", ()))),
            refusals=(*self.refusals, *own.get("refusals", ())),
            refusal_patterns=own.get("refusal_patterns", refusal_patterns),
            non_claim_patterns=own.get("non_claim_patterns", non_claims),
            numeric_abbreviations=frozenset(a.casefold() for a in shipped.numeric_abbreviations) if shipped
            else frozenset(),
            ordinal_dot=shipped.ordinal_dot if shipped else False,
            question_marks=shipped.question_marks if shipped else "",
            segmenter=shipped.segmenter if shipped else "sentencex",
            continuations=shipped.continuations if shipped else (),
            lower_case_continues=shipped is not None,
        )

    @property
    def claims_on(self) -> bool:
        """A claims mode (SPEC §2.1): sentences are split into claims and judged per claim."""
        return self.claims_mode != "sentence"

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("extra")
        if not self.claims_on:  # sentence mode hashes as it did before claims existed
            for name in CLAIMS_FIELDS:
                data.pop(name)
        return data

    @cached_property
    def rules_hash(self) -> str:
        """A short stable hash of the scoring rules (markers, check-worthiness, segmentation,
        languages with their shipped defaults, slices, day); the run's `JobSettings.run_config_hash`
        includes it."""
        rules = {**self.as_dict(), "language_defaults": {code: asdict(d) for code, d in DEFAULTS.items()}}
        blob = json.dumps(rules, sort_keys=True, default=list).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


_TOML_KEYS: dict[tuple[str, str], str] = {
    ("markers", "pattern"): "marker_pattern",
    ("markers", "separator"): "label_separator",
    ("check_worthiness", "refusals"): "refusals",
    ("check_worthiness", "refusal_patterns"): "refusal_patterns",
    ("check_worthiness", "non_claim_patterns"): "non_claim_patterns",
    ("check_worthiness", "questions_are_non_claims"): "questions_are_non_claims",
    ("segmentation", "abbreviations"): "abbreviations",
    ("segmentation", "max_answer_chars"): "max_answer_chars",
    ("segmentation", "max_citations_per_turn"): "max_citations_per_turn",
    ("segmentation", "max_citations_per_sentence"): "max_citations_per_sentence",
    ("segmentation", "max_sentences_per_turn"): "max_sentences_per_turn",
    ("slices", "attributes"): "slice_attributes",
    ("slices", "numbers"): "slice_numbers",
    ("slices", "multi_citation"): "slice_multi_citation",
    ("slices", "length_buckets"): "length_buckets",
    ("slices", "max_values_per_key"): "slice_max_values",
    ("day", "timezone"): "timezone",
    ("day", "assume_zone"): "assume_zone",
    ("claims", "mode"): "claims_mode",
    ("claims", "recorded"): "claims_recorded",
    ("claims", "max_claims"): "claims_max",
}
CLAIMS_MODES = ("sentence", "rules", "llm", "recorded")
CLAIMS_FIELDS = ("claims_mode", "claims_recorded", "claims_max")


def load_config(path: str | Path | None = None) -> Config:
    """The defaults, overridden by a TOML file when given. Unknown keys are an error."""
    if path is None:
        return Config()
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    config = config_from_mapping(data)
    recorded = config.claims_recorded
    if recorded and not Path(recorded).is_absolute():  # a recorded claims file beside its config
        config = replace(config, claims_recorded=str(Path(path).parent / recorded))
    return config


def config_from_mapping(data: dict[str, Any]) -> Config:
    """Build a Config from parsed TOML sections, validating names, types and regexes."""
    types = {f.name: f.type for f in fields(Config)}
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for section, table in data.items():
        if section == "criteria":  # [[criteria]]: validated into `core.criteria.Criteria` with the job settings
            if not isinstance(table, list):
                raise ConfigError("config: criteria must be an array of tables ([[criteria]])")
            extra["criteria"] = table
            continue
        if section == "gate":  # [gate]: the criteria's coverage limits, validated with them
            extra["gate"] = table
            continue
        if not isinstance(table, dict):
            raise ConfigError(f"config: [{section}] must be a table")
        if section == "languages":
            values["languages"] = _languages(table)
            continue
        for key, value in table.items():
            name = _TOML_KEYS.get((section, key))
            if name is None:
                if section in {"judge", "job", "warehouse", "validation", "monitor", "report", "source"}:
                    extra.setdefault(section, {})[key] = value
                    continue
                raise ConfigError(f"config: unknown key {section}.{key}")
            values[name] = _coerce(name, types[name], value)
    config = replace(Config(), **values, extra=extra)
    for attr in ("marker_re", "separator_re"):
        try:
            getattr(config, attr)
        except re.error as exc:
            raise ConfigError(f"config: invalid regular expression for {attr}: {exc}") from exc
    # the check-worthiness patterns: [check_worthiness] (English and languages without defaults),
    # then each [languages.<code>] section's
    for code in (UNDETERMINED, *sorted({c for c, _, _ in config.languages})):
        rules = config.rules_for(code)
        where = "[check_worthiness]" if code == UNDETERMINED else f"[languages.{code}]"
        for attr in ("refusal_res", "non_claim_res"):
            try:
                getattr(rules, attr)
            except re.error as exc:
                raise ConfigError(f"config: invalid regular expression in {where} {attr}: {exc}") from exc
    if config.assume_zone != "refuse":
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(config.assume_zone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ConfigError(f"config: day.assume_zone {config.assume_zone!r} is no time zone (or \"refuse\")"
                              ) from exc
    if config.claims_mode not in CLAIMS_MODES:
        raise ConfigError(f"config: claims.mode {config.claims_mode!r} is not one of {', '.join(CLAIMS_MODES)}")
    if config.claims_mode == "recorded" and not config.claims_recorded:
        raise ConfigError('config: claims.mode = "recorded" needs claims.recorded = "PATH" (a JSON file)')
    if config.claims_max < 1:
        raise ConfigError("config: claims.max_claims must be at least 1")
    if config.max_sentences_per_turn < 1:
        raise ConfigError("config: segmentation.max_sentences_per_turn must be at least 1 (it bounds one "
                          "answer's memory; there is no unlimited)")
    if "labels" not in config.marker_re.groupindex:
        raise ConfigError("config: markers.pattern needs a named group (?P<labels>...)")
    return config


_LANGUAGE_KEYS = ("abbreviations", "refusals", "non_claim_patterns", "refusal_patterns")
_LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}$")


def _languages(table: dict[str, Any]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """`[languages.<code>]` sections: a lower-case ISO 639 code each, keys of `_LANGUAGE_KEYS`."""
    out = []
    for code, keys in table.items():
        if not _LANGUAGE_CODE.match(code):
            raise ConfigError(f"config: [languages.{code}]: the section name must be a language code (de, fr, ja)")
        if not isinstance(keys, dict):
            raise ConfigError(f"config: [languages.{code}] must be a table")
        for key, value in keys.items():
            if key not in _LANGUAGE_KEYS:
                raise ConfigError(f"config: unknown key languages.{code}.{key} (one of {', '.join(_LANGUAGE_KEYS)})")
            out.append((code, key, _coerce(f"languages.{code}.{key}", "tuple[str, ...]", value)))
    return tuple(sorted(out))


def _coerce(name: str, type_name: Any, value: Any) -> Any:
    text = str(type_name)
    if text.startswith("tuple[str"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"config: {name} must be a list of strings")
        return tuple(value)
    if text.startswith("tuple[int"):
        if not isinstance(value, list) or not all(isinstance(v, int) for v in value):
            raise ConfigError(f"config: {name} must be a list of integers")
        return tuple(sorted(value))
    if text == "int":
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"config: {name} must be a non-negative integer")
        return value
    if text == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"config: {name} must be true or false")
        return value
    if not isinstance(value, str):
        raise ConfigError(f"config: {name} must be a string")
    return value
