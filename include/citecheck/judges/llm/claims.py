"""The LLM claim splitter (`[claims] mode = "llm"`, SPEC §2.1) over the LLM judge's client.

One structured request per answer covers its check-worthy sentences (the rubric
`claims_rubric.txt` is the prompt-cached system prompt; the reply is asked for as the JSON schema
`SPLIT_SCHEMA` and validated again on receipt, a malformed reply re-asked once). It goes through
the judge's own transport, `Calls`, `Budget` and `Ledger`: Message Batches when the judge uses them
(its own batch key, `<run id>/claims`, so a retried run reattaches to its split batch as the judge
does to its judging batch), and the same daily budget, which claim splitting and judging share.
A sentence whose answer the budget has no room for, or whose reply failed, stays one claim and
is counted (`claim_split_failures` by reason). Splits are cached by sentence text + model +
prompt version: a rerun asks nothing for sentences already split. Every split is verified by
`core.claims.apply_splits` (no added figure or capitalised word), exactly as the rule splitter's.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, Protocol

import jsonschema

from citecheck.core.claims import RejectedSplit, apply_splits
from citecheck.core.claims.verify import DUPLICATE_SENTENCE
from citecheck.core.model import StructuredTurn
from citecheck.core.text import text_hash
from citecheck.core.vocabulary import UNJUDGED
from citecheck.judges.llm.assessment import Assessment
from citecheck.judges.llm.batch_state import BatchStateStore
from citecheck.judges.llm.config import LLMConfig
from citecheck.judges.llm.prompt import REASK_NOTE
from citecheck.judges.llm.replies import entries_by_id, parse_reply
from citecheck.judges.llm.requests import AnswerRequest, estimate_request

log = logging.getLogger(__name__)

SPLIT_PROMPT_VERSION = "claims-1"
SPLIT_RUBRIC = files(__package__).joinpath("claims_rubric.txt").read_text(encoding="utf-8")
MAX_CLAIMS = 20
SPLIT_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["sentences"],
    "properties": {"sentences": {"type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["id", "claims"],
        "properties": {"id": {"type": "string"}, "claims": {"type": "array", "items": {"type": "string"}}},
    }}},
}
_VALIDATOR = jsonschema.Draft202012Validator(SPLIT_SCHEMA)


@dataclass(frozen=True, slots=True)
class Split:
    """The claims the model proposed for one sentence (verified later, with every other split)."""

    claims: tuple[str, ...]
    status: str = "ok"


class SplitReader:
    """How the transport builds, reads and re-asks a split request (the judge's own reader is the default)."""

    def params(self, config: LLMConfig, payload: str, reask_reason: str | None = None) -> dict[str, Any]:
        content = [{"type": "text", "text": payload}]
        if reask_reason is not None:
            content.append({"type": "text", "text": REASK_NOTE.format(reason=reask_reason)})
        system: dict[str, Any] = {"type": "text", "text": SPLIT_RUBRIC}
        if config.prompt_caching:
            system["cache_control"] = {"type": "ephemeral"}
        return {"model": config.model, "max_tokens": config.max_tokens, "system": [system],
                "messages": [{"role": "user", "content": content}],
                "output_config": {"format": {"type": "json_schema", "schema": SPLIT_SCHEMA}}}

    def parse(self, message: Any) -> dict[str, Any]:
        return parse_reply(message, _VALIDATOR)

    def assess(self, request: AnswerRequest, data: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        entries, named_twice = entries_by_id(data)
        asked = {sid for sid, _ in request.sentences}
        out: dict[str, Any] = {}
        for sid, _ in request.sentences:
            entry = entries.get(sid)
            if sid in named_twice:  # neither entry is the split: the sentence stays whole, rejected
                out[sid] = RejectedSplit(f"LLM reply: {DUPLICATE_SENTENCE}")
            else:
                out[sid] = Split(tuple(entry["claims"])) if entry is not None else \
                    Assessment(UNJUDGED, reason="sentence missing from the reply")
        return out, len(set(entries) - asked)


SPLIT_READER = SplitReader()


def split_key(model: str, sentence: str) -> str:
    """The cache key of a sentence's split: its text, the model and the prompt version."""
    return f"{model}|{SPLIT_PROMPT_VERSION}|{text_hash(sentence)}"


def split_request(config: LLMConfig, turn_id: str, sentences: Sequence[tuple[str, str]],
                  chars_per_token: float | None = None) -> AnswerRequest:
    """The one split request of an answer: its (id, text) sentences, the rubric as the system prompt."""
    payload = json.dumps({"passages": [], "sentences": [{"id": sid, "text": text} for sid, text in sentences]},
                         ensure_ascii=False, separators=(",", ":"))
    params = SPLIT_READER.params(config, payload)
    digest = text_hash("claims\x1f" + turn_id + "\x1f" + ",".join(sid for sid, _ in sentences))
    return AnswerRequest(turn_id=turn_id, custom_id=f"c{digest[:32]}", positions=tuple(range(len(sentences))),
                         sentences=tuple((sid, ()) for sid, _ in sentences), passages={}, params=params,
                         estimate=estimate_request(config, params, chars_per_token or config.chars_per_token),
                         reader=SPLIT_READER)


def split_reply_text(claims: Mapping[str, Sequence[str]]) -> str:
    """The reply object for these claims by sentence id (what a reply costs in output tokens)."""
    return json.dumps({"sentences": [{"id": sid, "claims": list(c)} for sid, c in claims.items()]},
                      ensure_ascii=False, separators=(",", ":"))


class SplitCache(Protocol):
    """A persistent split cache (the warehouse's `claim_split_cache` for the daily job): claims
    by `split_key`, looked up and stored many at a time."""

    def get_many(self, keys: Iterable[str]) -> dict[str, list[str]]: ...

    def put_many(self, values: Mapping[str, Sequence[str]]) -> None: ...


class LLMClaimSplitter:
    """Splits structured turns' check-worthy sentences with the LLM judge's client and budget.

    `split_turns` does it for a list of turns (the CLI's `score`, batch by batch). The daily job
    splits its whole day with one request set (one Message Batch): `plan` the turns chunk by chunk
    (cached splits found, requests built for the rest), `send` once, then `apply` to each turn.
    `cache`: a mapping (in memory) or a `SplitCache`.
    """

    name = "llm"
    languages: frozenset[str] | None = None  # the model splits any language

    def __init__(self, judge: Any, *, cache: MutableMapping[str, Sequence[str]] | SplitCache | None = None,
                 batch_state: BatchStateStore | None = None, max_claims: int = MAX_CLAIMS) -> None:
        from citecheck.judges.llm.batches import BatchTransport

        self.judge = judge
        self.config: LLMConfig = judge.config
        self.cache: MutableMapping[str, Sequence[str]] | SplitCache = cache if cache is not None else {}
        self.max_claims = max_claims
        calls = judge._calls  # the judge's client, budget and ledger: one daily budget
        self._calls = calls
        run_id = judge.run_id
        self._batches = BatchTransport(calls, batch_state or judge.batch_state,
                                       f"{run_id}/claims" if run_id else None)
        self.counts: Counter[str] = Counter()
        self._proposed: dict[tuple[str, int], Sequence[str] | RejectedSplit] = {}
        self._pending: list[tuple[AnswerRequest, dict[str, str]]] = []  # request, sentence id → text

    def split_turns(self, turns: Sequence[StructuredTurn]) -> list[StructuredTurn]:
        """The turns with their check-worthy sentences split (cached splits first, then one request
        per answer for the rest); each split verified, a failed one kept whole and counted."""
        self.plan(turns)
        self.send()
        out = [self.apply(st) for st in turns]
        self._proposed.clear()
        return out

    def plan(self, turns: Sequence[StructuredTurn]) -> None:
        """Find the turns' cached splits and build one request per answer for the other sentences
        (sent by `send`)."""
        model = self.config.model
        keys = {(st.turn_id, s.index): split_key(model, s.text) for st in turns for s in st.sentences
                if s.check_worthy}
        found = self._cached(set(keys.values()))
        for st in turns:
            ask = []
            for s in st.sentences:
                if not s.check_worthy:
                    continue
                claims = found.get(keys[(st.turn_id, s.index)])
                if claims is not None:
                    self._proposed[(st.turn_id, s.index)] = claims
                    self.counts["sentences_cached"] += 1
                else:
                    ask.append((str(s.index), s.text))
            if ask:
                self._pending.append((self._request(st.turn_id, ask), dict(ask)))

    def send(self) -> None:
        """Ask for every planned request at once (one Message Batch with the `batches` transport);
        store the splits in the cache; count the sentences that stay whole by reason."""
        from citecheck.judges.llm.transport import run_messages

        pending, self._pending = self._pending, []
        if not pending:
            return
        requests = [r for r, _ in pending]
        self.counts["answers_asked"] += len(requests)
        if not self._calls.has_api_key():
            results = {r.custom_id: {sid: Assessment(UNJUDGED, reason="skipped_no_api_key")
                                     for sid, _ in r.sentences} for r in requests}
        elif self.config.transport == "batches":
            results = self._batches.run(requests)
        else:
            results = run_messages(self._calls, requests)
        model = self.config.model
        new: dict[str, list[str]] = {}
        for r, texts in pending:
            for sid, outcome in results.get(r.custom_id, {}).items():
                if isinstance(outcome, Split):
                    self._proposed[(r.turn_id, int(sid))] = outcome.claims
                    new[split_key(model, texts[sid])] = list(outcome.claims)
                    self.counts["sentences_split_by_model"] += 1
                elif isinstance(outcome, RejectedSplit):  # counted as rejected by `apply`; not cached
                    self._proposed[(r.turn_id, int(sid))] = outcome
                else:  # budget, failure, refusal: the sentence stays one claim, counted by reason
                    self.counts[f"claim_split_failures:{(outcome.reason or 'unknown').split(':')[0]}"] += 1
        self._store(new)

    def apply(self, st: StructuredTurn) -> StructuredTurn:
        """The turn with the splits `plan` found and `send` received verified and set (a sentence
        with none stays one claim)."""
        splits = {s.index: self._proposed[(st.turn_id, s.index)] for s in st.sentences
                  if (st.turn_id, s.index) in self._proposed}
        valid = {i: c for i, c in splits.items()
                 if isinstance(c, RejectedSplit) or (isinstance(c, list | tuple) and len(c) <= 10 * self.max_claims)}
        return apply_splits(st, valid, self.max_claims)

    def has_api_key(self) -> bool:
        """Whether the judge's client has a key to ask with."""
        return self._calls.has_api_key()

    def spend(self) -> dict[str, float | int]:
        """What this splitter's judge has taken from the daily budget so far (USD, confirmed or not,
        and answers): the job books it into the judging steps' budget."""
        budget = self._calls.budget
        return {"usd": budget.spent + budget.unconfirmed, "answers": budget.answers_used}

    def _cached(self, keys: set[str]) -> dict[str, Sequence[str]]:
        if not keys:
            return {}
        if isinstance(self.cache, MutableMapping):
            return {k: self.cache[k] for k in keys if k in self.cache}
        return dict(self.cache.get_many(sorted(keys)))

    def _store(self, values: Mapping[str, list[str]]) -> None:
        if isinstance(self.cache, MutableMapping):
            self.cache.update(values)
        elif values:
            self.cache.put_many(values)

    def _request(self, turn_id: str, sentences: Sequence[tuple[str, str]]) -> AnswerRequest:
        return split_request(self.config, turn_id, sentences, self._calls.ledger.chars_per_token)

    def stats(self) -> dict[str, Any]:
        return dict(self.counts)
