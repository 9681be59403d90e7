"""Quote verification (SPEC §4): a reply entry counts only when its quotes and labels check out.

No fuzzy matching: every quote must occur in the passage its label names, one the sentence
cites, after normalising whitespace, case, curly apostrophes and Unicode forms (NFKC: full-width
"２２０ユーロ" is "220ユーロ"; `citecheck.core.text.quote_in_passage`).
Every citation marked `full` or `partial` needs a quote of its own, a verdict other than
`not_supported` needs at least one quote, and the labels must agree with the verdict
(`supported` needs some support; a `full` citation means `supported`). Anything else makes the
verdict *unverified*: it is recorded and does not count as support.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from citecheck.core.text import quote_in_passage
from citecheck.core.vocabulary import FULL, NO_SUPPORT, REPLY_NOT_SUPPORTED, REPLY_SUPPORTED
from citecheck.judges.llm.assessment import Assessment


def assess_entry(entry: Mapping[str, Any], cited: Sequence[str], passages: Mapping[str, str]) -> Assessment:
    """Verify one reply entry against the passages its sentence cites."""
    verdict = entry["verdict"]
    given: dict[str, str] = {}
    for c in entry["citations"]:
        given.setdefault(c["label"], c["support"])
    supports = {label: given.get(label, NO_SUPPORT) for label in cited}
    problems: list[str] = []
    quote_ok = True
    quotes = []
    for q in entry["quotes"]:
        label = q["label"]
        verified = label in supports and quote_in_passage(q["quote"], passages[label])
        quotes.append({"label": label, "quote": q["quote"], "verified": verified})
        if not verified:
            quote_ok = False
            problems.append(
                f"quote from {label} not found" if label in supports else f"quote from uncited {label}"
            )
    quoted = {q["label"] for q in quotes if q["verified"]}
    for label, support in supports.items():
        if support != NO_SUPPORT and label not in quoted:
            quote_ok = False
            problems.append(f"{label} marked {support} without a quote")
    if verdict != REPLY_NOT_SUPPORTED and not quotes:
        quote_ok = False
        problems.append(f"no quotes for a {verdict} verdict")
    if verdict == REPLY_SUPPORTED and all(s == NO_SUPPORT for s in supports.values()):
        problems.append("supported with no supporting citation")
    if verdict != REPLY_SUPPORTED and FULL in supports.values():
        problems.append(f"a full citation with verdict {verdict}")
    return Assessment(
        status="ok" if not problems else "unverified",
        verdict=verdict,
        citations=tuple({"label": lab, "support": s} for lab, s in supports.items()),
        quotes=tuple(quotes),
        quotes_verified=quote_ok,
        reason="; ".join(problems) or None,
    )


def verified_quotes(llm: Any) -> dict[str, list[str]]:
    """A stored LLM verdict's verified quotes by passage label, in reply order (labels in the
    order they are first quoted): what a re-cite suggestion and the report's highlight show."""
    quotes: dict[str, list[str]] = {}
    if isinstance(llm, Mapping):
        for q in llm.get("quotes") or ():
            if isinstance(q, Mapping) and q.get("verified") and q.get("label") and q.get("quote"):
                quotes.setdefault(str(q["label"]), []).append(str(q["quote"]))
    return quotes
