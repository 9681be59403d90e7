"""THE row shape of a scored sentence, from the pipeline to the warehouse and the CLI's JSON.

`sentence_record` derives every field of one sentence verdict once; the CLI's JSON
(`sentence_json`, `turn_json`) and the warehouse's `sentence_verdicts` row (`sentence_row`) are
projections of it, never rebuilt field by field. `citation_rows` gives the sentence's citations
(`citation_verdicts`), `claim_records` its claims in a claims mode. A
list of labels stored in one text column is written by `join_labels` and read back by
`split_labels`, the one pair for the `+` join.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from citecheck.core.language_rules import has_shipped_rules
from citecheck.core.metrics import ScoredTurn, full_counts, ratios, turn_counts, values
from citecheck.core.structural import claim_figures
from citecheck.core.verdicts import NOT_SELECTED, SentenceVerdict, evidence_windows

LABEL_SEPARATOR = "+"

# What the structural pass gives every sentence, and what the verdict adds (the CLI's JSON
# keys, in their order; `parse` prints the first group only).
STRUCTURAL_FIELDS = ("index", "text", "labels", "unknown_labels", "stale_labels", "check_worthy",
                     "non_claim_reason", "attached")
VERDICT_FIELDS = ("verdict", "supported_elsewhere_by", "judge", "judge_version", "score", "contradiction",
                  "unjudged_reason")
# The warehouse row: the record's fields but `index` (keyed as `sentence_index`) and the two
# reasons (one `reason` column: why unjudged, else why not check-worthy), plus the judge's detail.
ROW_DETAIL_FIELDS = ("llm", "first_stage", "best_windows")


def join_labels(labels: Iterable[str]) -> str | None:
    """Labels as one text value (`S1+S3`); None for none."""
    return LABEL_SEPARATOR.join(labels) or None


def split_labels(text: str | None) -> tuple[str, ...]:
    """`join_labels` read back: the labels of a stored value (none for None or "")."""
    return tuple(label for label in (text or "").split(LABEL_SEPARATOR) if label)


def sentence_record(v: SentenceVerdict) -> dict[str, Any]:
    """A sentence verdict as flat fields: STRUCTURAL_FIELDS, `figures`, VERDICT_FIELDS, `llm` and
    `first_stage` (the cascade's first-stage outcome the review loop measures)."""
    s, j = v.sentence, v.judgment
    return {
        "index": s.index,
        "text": s.text,
        "labels": list(s.labels),
        "unknown_labels": list(s.unknown_labels),
        "stale_labels": list(s.stale_labels),
        "check_worthy": s.check_worthy,
        "non_claim_reason": s.non_claim_reason,
        "attached": s.attached,
        "figures": [f.as_dict() for f in s.figures],
        "verdict": v.verdict,
        "supported_elsewhere_by": join_labels(v.supported_elsewhere_by),
        "judge": j.judge if j else None,
        "judge_version": j.judge_version if j else None,
        "score": j.score if j else None,
        "contradiction": j.contradiction if j else None,
        "unjudged_reason": j.unjudged_reason if j else None,
        "llm": j.detail.get("llm") if j else None,
        "first_stage": j.detail.get("first_stage") if j else None,
    }


def figure_values(figures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Figures without their text (`kind`, `value`, `traced`): what a dashboard may read of them
    (`figure_values`; the written `text` is a piece of the answer, `warehouse.grants.BI_TEXT_COLUMNS`)."""
    return [{"kind": f["kind"], "value": f["value"], "traced": f["traced"]} for f in figures]


# The `sentence_verdicts` row's fields taken from the record as they are.
ROW_RECORD_FIELDS = tuple(k for k in (*STRUCTURAL_FIELDS, *VERDICT_FIELDS) if k not in ("index", "unjudged_reason"))
_NONE: Mapping[str, Any] = MappingProxyType({})


def sentence_row(v: SentenceVerdict, turn_id: str, conversation_id: str | None, language: str | None = None,
                 language_source: str | None = None) -> dict[str, Any]:
    """The `sentence_verdicts` row of a sentence (the warehouse adds the run and the day), with
    its turn's language (SPEC §2.2)."""
    record = sentence_record(v)
    row = {"turn_id": turn_id, "sentence_index": v.sentence.index, "conversation_id": conversation_id}
    for key in ROW_RECORD_FIELDS:
        row[key] = record[key]
    figures = record["figures"]
    row.update(reason=record["unjudged_reason"] or record["non_claim_reason"], llm=record["llm"] or None,
               first_stage=record["first_stage"] or None, best_windows=evidence_windows(v), language=language,
               language_source=language_source,
               language_rules_generic=None if language is None else not has_shipped_rules(language),
               figures=figures, figure_values=figure_values(figures) if figures else [])
    return row


def citation_rows(v: SentenceVerdict, turn_id: str) -> list[dict[str, Any]]:
    """The `citation_verdicts` rows of a sentence, one per citation marker (the warehouse adds the
    run and the day): its label, status (resolved / stale / unknown), the judge's alone / rest
    answers and whether it is credited, its pointer problem and unverified fields."""
    s, j = v.sentence, v.judgment
    stale, unknown, credited = set(s.stale_labels), set(s.unknown_labels), v.credited
    problems = dict(s.pointer_problems) if s.pointer_problems else _NONE
    unverified = dict(s.unverified) if s.unverified else _NONE
    alone, rest = (j.alone, j.rest) if j is not None else (_NONE, _NONE)
    return [{"turn_id": turn_id, "sentence_index": s.index, "label": label,
             "status": "stale" if label in stale else "unknown" if label in unknown else "resolved",
             "check_worthy": s.check_worthy, "alone": alone.get(label), "rest": rest.get(label),
             "credited": credited.get(label, False), "pointer_problem": problems.get(label),
             "unverified": unverified.get(label)} for label in s.labels]


def sentence_json(v: SentenceVerdict, *, judged: bool = True) -> dict[str, Any]:
    """The CLI's JSON of one sentence (`sentence_record` plus credit and the judge's detail)."""
    s, j = v.sentence, v.judgment
    record = sentence_record(v)
    out = {key: record[key] for key in STRUCTURAL_FIELDS}
    out["figures"] = record["figures"]
    out.update(duplicate_labels=list(s.duplicate_labels), markers_after_stop=s.markers_after_stop)
    if s.pointer_problems or s.unverified:
        out.update(pointer_problems=dict(s.pointer_problems), unverified=dict(s.unverified))
    if not judged:
        return out
    out.update({key: record[key] for key in VERDICT_FIELDS}, credited=v.credited)
    if j is not None:
        out["alone"] = j.alone
        out["rest"] = j.rest
        if "llm" in j.detail:
            out["llm"] = j.detail["llm"]
        if j.detail.get("escalation"):
            out["escalation"] = j.detail["escalation"]
    return out


def claim_records(scored: ScoredTurn, sentence_index: int) -> list[dict[str, Any]]:
    """The claims of one sentence (SPEC §2.1): `{index, text, labels, figures, verdict, credited,
    judge}` (verdict `not_selected` outside the judged share; `figures` the claim's own, SPEC §3.5,
    `structural.claim_figures`); the CLI's `claims` and the warehouse's `claim_verdicts` rows are
    made from these."""
    st = scored.structured
    sentence = st.sentences[sentence_index]
    if st.claims is None or not sentence.check_worthy:
        return []
    decided = (scored.claims or {}).get(sentence_index, ())
    figures_of = claim_figures(st, sentence)
    out = []
    for c, text in enumerate(st.claim_texts(sentence)):
        v = decided[c] if c < len(decided) else None
        j = v.judgment if v is not None else None
        out.append({
            "index": c,
            "text": text,
            "labels": list(sentence.labels),
            "figures": [f.as_dict() for f in figures_of[c]],
            "verdict": v.verdict if v is not None else NOT_SELECTED,
            "credited": dict(v.credited) if v is not None else {label: False for label in sentence.labels},
            "judge": j.judge if j else None,
            "judge_version": j.judge_version if j else None,
            "score": j.score if j else None,
            "unjudged_reason": j.unjudged_reason if j else None,
            "supported_elsewhere_by": join_labels(v.supported_elsewhere_by) if v is not None else None,
            "alone": dict(j.alone) if j else {},
            "rest": dict(j.rest) if j else {},
            "unknown_labels": list(sentence.unknown_labels),
            "stale_labels": list(sentence.stale_labels),
        })
    return out


CLAIM_FIELDS = ("index", "text", "labels", "figures", "verdict", "credited", "judge")


def claim_rows(scored: ScoredTurn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A turn's `claim_verdicts` rows and `claim_citation_verdicts` rows (one per link, a (claim,
    label) pair), from `claim_records`; none in sentence mode (the warehouse adds the run and day)."""
    st = scored.structured
    claims: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    for s in st.sentences:
        keys = {"turn_id": st.turn_id, "sentence_index": s.index}
        for c in claim_records(scored, s.index):
            claims.append({**keys, "claim_index": c["index"], "conversation_id": st.turn.conversation_id,
                           "text": c["text"], "labels": c["labels"], "verdict": c["verdict"], "score": c["score"],
                           "supported_elsewhere_by": c["supported_elsewhere_by"], "judge": c["judge"],
                           "judge_version": c["judge_version"], "reason": c["unjudged_reason"],
                           "figures": c["figures"], "figure_values": figure_values(c["figures"])})
            stale, unknown = set(c["stale_labels"]), set(c["unknown_labels"])
            links.extend({**keys, "claim_index": c["index"], "label": label,
                          "status": "stale" if label in stale else "unknown" if label in unknown else "resolved",
                          "alone": c["alone"].get(label), "rest": c["rest"].get(label),
                          "credited": c["credited"].get(label, False)} for label in dict.fromkeys(c["labels"]))
    return claims, links


def turn_json(scored: ScoredTurn, *, judged: bool = True) -> dict[str, Any]:
    """The CLI's JSON of one scored turn: its sentences (with their claims in a claims mode),
    pointer problems, counts and metrics."""
    st = scored.structured
    sentences = [sentence_json(v, judged=judged) for v in scored.verdicts]
    if st.claims is not None:  # a claims mode: each sentence's claims (`parse`: the split alone)
        keys = CLAIM_FIELDS if judged else ("index", "text", "labels", "figures")
        for out_sentence, v in zip(sentences, scored.verdicts, strict=True):
            out_sentence["claims"] = [{k: c[k] for k in keys} for c in claim_records(scored, v.sentence.index)]
    out: dict[str, Any] = {
        "turn_id": st.turn_id,
        "conversation_id": st.turn.conversation_id,
        "question": st.turn.question,
        "attributes": dict(st.turn.attributes),
        "language": st.language,
        "language_source": st.language_source,
        "language_rules_generic": st.language_rules_generic,
        "is_refusal": st.is_refusal,
        "sentences": sentences,
        "pointer_problems": [
            {"document_index": p.document_index, "reason": p.reason, "cited_title": p.cited_title,
             "recorded_title": p.recorded_title, "kind": p.kind, "label": p.label, "placed": p.placed}
            for p in st.turn.pointer_problems
        ],
    }
    counts = turn_counts(scored)
    out["counts"] = full_counts(counts)
    if judged:
        out["selected"] = scored.selected
        out["metrics"] = values(ratios(counts))
    return out
