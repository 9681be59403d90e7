"""Evidence sufficiency (SPEC §5, optional): when reference key facts exist for a question,
the share of them that some passage of the context set supports. It separates retrieval
failures (the facts were never in the prompt) from generation failures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from citecheck.core.model import JudgeItem, Passage
from citecheck.judges.base import Judge
from citecheck.stats.ratio import Ratio


def evidence_sufficiency(key_facts: Sequence[str], context: Sequence[Passage], judge: Judge) -> dict[str, Any]:
    """{"sufficiency", "ratio": [n, d], "missing": [facts no passage supports], "unjudged": [...]}."""
    items = [JudgeItem("key-facts", i, fact, (), tuple(context)) for i, fact in enumerate(key_facts)]
    judgments = judge.judge(items)
    missing = [f for f, j in zip(key_facts, judgments, strict=True) if j.judged and not j.faithful]
    unjudged = [f for f, j in zip(key_facts, judgments, strict=True) if not j.judged]
    ratio = Ratio(len(key_facts) - len(missing) - len(unjudged), len(key_facts) - len(unjudged))
    return {"sufficiency": ratio.value, "ratio": ratio.as_list(), "missing": missing, "unjudged": unjudged}
