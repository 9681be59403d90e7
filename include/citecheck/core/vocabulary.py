"""THE verdict vocabulary (SPEC §4-6): every name a sentence verdict, an LLM reply, a reviewer's
label or a citation grade can take, the groups readers need, and the one mapping from the LLM's
(and the reviewer's) names to the sentence verdicts. Every module reads its names and groups here;
no other module writes a verdict name as a literal (`tests/unit/test_vocabulary.py` checks).

Sentence verdicts (`core.verdicts.decide` gives each sentence one):

| verdict | meaning | group |
|---|---|---|
| `supported` | its resolved citations support it | judged, supported, faithful |
| `uncited_supported` | it cites nothing resolvable, a context passage supports it | judged, supported, faithful |
| `miscited` | its citations don't support it, another context passage does | judged, faithful, bad |
| `unsupported` | no context passage supports it | judged, bad |
| `contradicted` | a cited passage contradicts it (LLM judge) | judged, bad |
| `partial` | its citations support part of it (LLM judge) | judged |
| `partially_supported` | some of its claims are supported, some not (a claims mode) | judged |
| `unjudged` | selected, but no judge could decide (no text, an LLM failure) | not judged |
| `not_check_worthy` | nothing to check (greeting, hedge, question) | not judged |
| `not_selected` | its answer was outside the judged share | not judged |

`BAD_VERDICTS` are the verdicts a runtime checker rewrites or blocks, the report flags and readers
are shown as wrong sources: `contradicted` is bad (a cited passage states the opposite, worse than
no support); `partial` and `partially_supported` are not (its citations carry part of the
sentence; `partial_rate` and `partially_supported_rate` show them, the claim metrics the rest).

The LLM judge replies with `supported`, `partial`, `not_supported` or `contradicted` per
sentence (`judges/llm/rubric.txt`) and grades each citation `full`, `partial` or `none`; a
reviewer labels a sentence `supported`, `partial` or `not_supported` and grades citations the
same way. `REPLY_TO_VERDICT` is the one mapping from those names to the sentence verdicts
(`not_supported` → `unsupported`; `core.verdicts.decide` then makes an unsupported sentence that
another passage supports `miscited` or `uncited_supported`).

Adding a verdict: a constant here, its place in `VERDICTS` and in the groups it belongs to, a
row in the table above; a judged verdict also gets a count key and a rate in
`core.metrics.definitions` (`tests/unit/test_vocabulary.py` fails until every judged verdict has one).
"""

from __future__ import annotations

from types import MappingProxyType

# --- sentence verdicts ------------------------------------------------------------------------
SUPPORTED = "supported"
MISCITED = "miscited"
UNCITED_SUPPORTED = "uncited_supported"
UNSUPPORTED = "unsupported"
PARTIAL = "partial"
CONTRADICTED = "contradicted"
PARTIALLY_SUPPORTED = "partially_supported"
UNJUDGED = "unjudged"
NOT_CHECK_WORTHY = "not_check_worthy"
NOT_SELECTED = "not_selected"

# Judged: a judge decided the sentence; these are the population of every judged metric.
JUDGED_VERDICTS = (SUPPORTED, MISCITED, UNCITED_SUPPORTED, UNSUPPORTED, PARTIAL, CONTRADICTED, PARTIALLY_SUPPORTED)
# Not judgments: outside every judged metric, never sampled for review.
NOT_JUDGED_VERDICTS = (UNJUDGED, NOT_CHECK_WORTHY, NOT_SELECTED)
VERDICTS = (*JUDGED_VERDICTS, *NOT_JUDGED_VERDICTS)
# Supported: the sentence's own citations support it (citing nothing: a context passage does);
# a judge "passes" such a sentence (SPEC §6).
SUPPORTED_VERDICTS = (SUPPORTED, UNCITED_SUPPORTED)
# Faithful: some context passage supports the sentence, cited or not (`faithfulness`).
FAITHFUL_VERDICTS = (SUPPORTED, MISCITED, UNCITED_SUPPORTED)
# Bad: rewrite or block at runtime, flagged in the report, a wrong source for a reader.
BAD_VERDICTS = (CONTRADICTED, UNSUPPORTED, MISCITED)  # worst first
# The verdicts only the LLM judge's own reply gives a sentence with resolved citations (`verdicts.decide`).
LLM_ONLY_VERDICTS = (PARTIAL, CONTRADICTED)
# A context passage the sentence does not cite supports it: a re-cite suggestion, by kind.
RECITE_KINDS = MappingProxyType({MISCITED: "miscited", UNCITED_SUPPORTED: "uncited"})

# --- the LLM judge's reply and the reviewer's labels ---------------------------------------------
REPLY_SUPPORTED = "supported"
REPLY_PARTIAL = "partial"
REPLY_NOT_SUPPORTED = "not_supported"
REPLY_CONTRADICTED = "contradicted"
REPLY_VERDICTS = (REPLY_SUPPORTED, REPLY_PARTIAL, REPLY_NOT_SUPPORTED, REPLY_CONTRADICTED)
# A reviewer's sentence label (SPEC §6): the reply's names without `contradicted`.
REVIEW_LABELS = (REPLY_SUPPORTED, REPLY_PARTIAL, REPLY_NOT_SUPPORTED)
# THE mapping from a reply's (or a label's) name to the sentence verdict it stands for.
REPLY_TO_VERDICT = MappingProxyType({
    REPLY_SUPPORTED: SUPPORTED,
    REPLY_PARTIAL: PARTIAL,
    REPLY_NOT_SUPPORTED: UNSUPPORTED,
    REPLY_CONTRADICTED: CONTRADICTED,
})

# How far one cited passage alone supports the sentence (the LLM's and the reviewer's grades).
FULL = "full"
PARTIAL_SUPPORT = "partial"
NO_SUPPORT = "none"
SUPPORT_LEVELS = (FULL, PARTIAL_SUPPORT, NO_SUPPORT)  # strongest first


def verdict_of_reply(reply: str | None) -> str | None:
    """The sentence verdict an LLM reply's (or a reviewer's) name stands for; None for none."""
    return None if reply is None else REPLY_TO_VERDICT.get(reply)
