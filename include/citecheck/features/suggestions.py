"""Re-cite suggestions (issue 13 §2): for every miscited sentence, the label(s) that support it;
for every uncited but supported sentence, the citation to add.

`build_suggestions` is a pure function of one sentence verdict and its turn's context passages,
called where the verdicts are decided (the job's fold_shard step stages its rows; publish moves them
to `recite_suggestions` with the day). Each row names the suggested passage's source, document id
and version, the judge that found it, that judge's score for the passage (NLI) or a verified LLM
quote from it, and whether a product team may apply it without a person looking:

- `first_stage_only`: the supporting passage was found by a model judge (the NLI first stage)
  and no verified LLM quote from it confirms it. A recorded judge's table (human judgments) and
  a verified quote count as confirmation.
- `has_numbers`: the sentence holds a number; a re-cited sentence can pass against a passage
  whose condition (amount, date, limit) it dropped.
- `several_passages`: only passages together support it; a person picks the markers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from citecheck.core.model import Passage
from citecheck.core.verdicts import SentenceVerdict
from citecheck.core.vocabulary import RECITE_KINDS
from citecheck.judges.llm.verify import verified_quotes

CONFIRMED_BY_TABLE = frozenset({"recorded"})  # judges whose judgments are a human-made table
_DIGIT = re.compile(r"\d")


def build_suggestions(turn_id: str, verdict: SentenceVerdict, context: Sequence[Passage]) -> list[dict[str, Any]]:
    """The suggestion rows of one sentence verdict (none unless miscited or uncited-but-supported),
    without `day` and `run_id` (added when staged)."""
    kind = RECITE_KINDS.get(verdict.verdict)
    suggested = list(verdict.supported_elsewhere_by)
    if kind is None or not suggested:
        return []
    sentence, judgment = verdict.sentence, verdict.judgment
    detail = judgment.detail if judgment is not None else {}
    first = detail.get("first_stage") or {}
    finder = first.get("judge") or (judgment.judge if judgment is not None else None)
    passages = {p.label: p for p in context}
    passage = passages.get(suggested[0])
    quote = next((q for label, qs in verified_quotes(detail.get("llm")).items() if label in suggested for q in qs),
                 None)
    score = (detail.get("passage_scores") or {}).get(suggested[0])
    cautions = []
    if quote is None and finder not in CONFIRMED_BY_TABLE:
        cautions.append("first_stage_only")
    if _DIGIT.search(sentence.text):
        cautions.append("has_numbers")
    if len(suggested) > 1:
        cautions.append("several_passages")
    return [{
        "turn_id": turn_id,
        "sentence_index": sentence.index,
        "kind": kind,
        "sentence": sentence.text,
        "cited_labels": list(sentence.labels),
        "suggested_labels": suggested,
        "source": (passage.source or None) if passage else None,
        "document_id": passage.document_id if passage else None,
        "version": passage.version if passage else None,
        "judge": finder,
        "score": float(score) if score is not None else None,
        "quote": quote,
        "auto_apply": not cautions,
        "caution": ",".join(cautions) or None,
    }]
