"""The review sample of a period: stratified, deterministic, blind.

Strata are (final verdict, deciding judge) over the period's judged check-worthy sentences, so
rare verdicts and the LLM-decided sentences are represented. Allocation: half of the sample is
split equally across strata (at least one item each when the size allows), the rest in
proportion to their sizes (largest remainders; a stratum never gets more than it holds; what one
cannot take goes to the others). Inside a
stratum the items are the first `n_h` by a salted hash of (turn, sentence), a fixed pseudo-random
order, so the draw is a simple random sample without replacement and its inclusion probability
is exactly `n_h / N_h`; a re-export of the same period and size draws the same items.

Sentences readers reported a wrong source on (reader events) are labelled examples worth having
all of: they form their own stratum, drawn whole (inclusion probability 1), and the random
strata are drawn from the other sentences. They are no random sample: the population estimates
of `review report` use the random strata (the traffic nobody reported), and judge quality on the
reported items is reported apart.

The export never carries a judge's verdict, score or name (blind review). Days published in a
claims mode add each sampled sentence's claims (their text and the cited labels they carry) and an
empty `claim_labels` column: the reviewer labels each claim as the sentence (`review report`
compares those labels with the judges' claim verdicts).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from citecheck.core.figures import untraced_figures

DEFAULT_SALT = "citecheck-review-v1"
# What a reviewer reads and fills, in column order; the last two are theirs.
EXPORT_FIELDS = ("item_id", "day", "question", "answer", "sentence", "untraced_figures", "cited_labels",
                 "cited_passages", "other_passages", "label", "citation_labels")
FORMATS = ("csv", "jsonl")
# A claims mode (SPEC 2.1): each sentence's claims with their links, and the reviewer's label per
# claim, after the sentence's columns; an export of sentence-mode days has neither column.
CLAIM_FIELDS = ("claims", "claim_labels")


def sample_id(from_day: dt.date, to_day: dt.date) -> str:
    """The id of a period's sample (one per period; a re-export replaces it)."""
    return f"{from_day.isoformat()}..{to_day.isoformat()}"


def item_id(turn_id: str, sentence_index: int) -> str:
    """A sentence's review item id: stable across exports, so labels survive a re-export."""
    return "r" + hashlib.sha256(f"{turn_id}\x1f{sentence_index}".encode()).hexdigest()[:20]


REPORTED_STRATUM = "reader_reported"  # sentences readers reported a wrong source on: all of them, probability 1


def stratum(row: Mapping[str, Any]) -> str:
    """(final verdict, deciding judge) of a published sentence row."""
    return f"{row['verdict']}|{row.get('judge') or 'none'}"


def is_random_stratum(name: str) -> bool:
    """Whether a stratum is a random draw of the population (not the reported census)."""
    return name != REPORTED_STRATUM


def allocate(sizes: Mapping[str, int], size: int) -> dict[str, int]:
    """Items per stratum: half equally, half by stratum size (largest remainders), capped."""
    sizes = {k: v for k, v in sizes.items() if v > 0}
    total = sum(sizes.values())
    size = max(0, min(size, total))
    if not sizes or not size:
        return {k: 0 for k in sizes}
    equal = size // (2 * len(sizes))
    if size >= len(sizes):  # every stratum represented, so the weights stand for all of them
        equal = max(1, equal)
    alloc = {k: min(n, equal) for k, n in sizes.items()}
    while (left := size - sum(alloc.values())) > 0:
        room = {k: sizes[k] - alloc[k] for k in sizes if sizes[k] > alloc[k]}
        weight = sum(room.values())
        quotas = {k: left * r / weight for k, r in room.items()}
        base = {k: min(room[k], int(q)) for k, q in quotas.items()}
        given = sum(base.values())
        order = sorted(room, key=lambda k: (-(quotas[k] - int(quotas[k])), k))
        for k in order[: left - given]:
            if base[k] < room[k]:
                base[k] += 1
        for k, extra in base.items():
            alloc[k] += extra
        if not any(base.values()):  # cannot happen while room is left; a guard against looping
            break
    return alloc


def draw(population: Sequence[Mapping[str, Any]], size: int, salt: str = DEFAULT_SALT,
         reported: Collection[tuple[str, int]] = ()) -> list[dict[str, Any]]:
    """The sampled rows, each with its stratum, stratum size and count, inclusion probability,
    item id and cited labels; ordered by item id. `reported`: (turn, sentence index) of sentences
    readers reported; they form their own stratum, `REPORTED_STRATUM`, drawn whole (inclusion
    probability 1) on top of `size`, and the random strata are drawn from the other sentences."""
    strata: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    census: list[Mapping[str, Any]] = []
    for row in population:
        if (row["turn_id"], row["sentence_index"]) in reported:
            census.append(row)
        else:
            strata[stratum(row)].append(row)
    alloc = allocate({k: len(v) for k, v in strata.items()}, size)
    if census:
        strata[REPORTED_STRATUM] = census
        alloc[REPORTED_STRATUM] = len(census)
    out = []
    for name, rows in strata.items():
        n = alloc[name]
        ranked = sorted(rows, key=lambda r: _rank(r, salt))[:n]
        for row in ranked:
            out.append({
                "item_id": item_id(row["turn_id"], row["sentence_index"]), "day": row["day"],
                "turn_id": row["turn_id"], "sentence_index": row["sentence_index"],
                "cited_labels": cited_labels(row), "stratum": name, "stratum_size": len(rows),
                "stratum_sampled": n, "inclusion_probability": n / len(rows),
            })
    return sorted(out, key=lambda r: r["item_id"])


def _rank(row: Mapping[str, Any], salt: str) -> str:
    return hashlib.sha256(f"{salt}\x1f{row['turn_id']}\x1f{row['sentence_index']}".encode()).hexdigest()


def cited_labels(row: Mapping[str, Any]) -> list[str]:
    """The resolved labels of a sentence (what the reviewer grades), in citation order, once."""
    skip = set(row.get("unknown_labels") or []) | set(row.get("stale_labels") or [])
    seen: list[str] = []
    for label in row.get("labels") or []:
        if label not in skip and label not in seen:
            seen.append(label)
    return seen


def export_records(items: Sequence[Mapping[str, Any]], sentences: Mapping[tuple[str, int], Mapping[str, Any]],
                   turns: Mapping[str, Mapping[str, Any]],
                   claims: Mapping[tuple[str, int], Sequence[Mapping[str, Any]]] | None = None
                   ) -> list[dict[str, Any]]:
    """One blind record per item: the texts a reviewer needs (with the sentence's figures that its
    cited passages do not state, a structural fact to check, not a verdict), empty
    `label`/`citation_labels`. When any sampled sentence has claims (a claims-mode day), every
    record also has `claims` (`claim`, `text`, `cited_labels`: no verdict) and an empty `claim_labels`."""
    claims = claims or {}
    with_claims = any(claims.get((i["turn_id"], i["sentence_index"])) for i in items)
    records = []
    for item in items:
        turn = turns.get(item["turn_id"], {})
        sentence = sentences.get((item["turn_id"], item["sentence_index"])) or {}
        passages = list(turn.get("passages", []))
        cited = list(item["cited_labels"])
        day = item["day"]
        records.append({
            "item_id": item["item_id"], "day": day.isoformat() if isinstance(day, dt.date) else day,
            "question": turn.get("question") or "", "answer": turn.get("answer") or "",
            "sentence": sentence.get("text", ""),
            "untraced_figures": [f["text"] for f in untraced_figures(sentence.get("figures"))],
            "cited_labels": cited,
            "cited_passages": [{"label": lab, "text": t or ""} for lab, t in passages if lab in cited],
            "other_passages": [{"label": lab, "text": t or ""} for lab, t in passages if lab not in cited],
            "label": None, "citation_labels": None,
        })
        if with_claims:
            records[-1]["claims"] = [
                {"claim": c["claim_index"], "text": c["text"],
                 "cited_labels": [lab for lab in cited if lab in c["labels"]]}
                for c in claims.get((item["turn_id"], item["sentence_index"]), ())]
            records[-1]["claim_labels"] = None
    return records


def export_fields(records: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The columns of an export: `EXPORT_FIELDS`, then `CLAIM_FIELDS` when its records have claims."""
    return EXPORT_FIELDS + CLAIM_FIELDS if any("claims" in r for r in records) else EXPORT_FIELDS


def _claims_text(claims: Sequence[Mapping[str, Any]]) -> str:
    return "\n\n".join(f"[{c['claim']}] {c['text']} (cites {';'.join(c['cited_labels']) or 'nothing'})"
                        for c in claims)


def _passages_text(passages: Sequence[Mapping[str, str]]) -> str:
    return "\n\n".join(f"[{p['label']}] {p['text']}" for p in passages)


def write_export(records: Sequence[Mapping[str, Any]], path: str | Path, fmt: str = "csv") -> None:
    """CSV (UTF-8 with a byte-order mark so spreadsheets read it as UTF-8; passages as `[S1] text`
    blocks; `cited_labels` as `S1;S3`; claims as `[0] text (cites S1)` blocks) or JSON Lines (the
    same fields, lists kept as lists)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = export_fields(records)
    if fmt == "jsonl":
        with path.open("w", encoding="utf-8") as handle:
            for r in records:
                handle.write(json.dumps({k: r[k] for k in fields}, ensure_ascii=False) + "\n")
        return
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for r in records:
            claims = {"claims": _claims_text(r["claims"]), "claim_labels": ""} if "claims" in r else {}
            writer.writerow({**r, "cited_labels": ";".join(r["cited_labels"]),
                             "untraced_figures": ";".join(r["untraced_figures"]),
                             "cited_passages": _passages_text(r["cited_passages"]),
                             "other_passages": _passages_text(r["other_passages"]),
                             "label": "", "citation_labels": "", **claims})
