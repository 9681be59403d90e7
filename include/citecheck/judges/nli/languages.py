"""NLI models per language (SPEC §2.2): the judge file's `"models"` map.

`{"kind": "nli", "models": {"en": "cross-encoder/nli-deberta-v3-base", "de": "…", "*": "…"}}`:
each sentence is judged by the model of its turn's language (`JudgeItem.language`), else by the
`"*"` model. A sentence whose language has neither is `unjudged` with the reason
`language_unsupported` (a cascade sends it to the LLM judge when it has cited passages). Each
model is one `NLIJudge` (the same settings, its own scorer, the shared judgment cache), loaded
the first time a sentence needs it, so a day without German never loads the German model.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from citecheck.core.languages import LANGUAGE_UNSUPPORTED
from citecheck.core.model import JudgeItem, Judgment, unjudged
from citecheck.judges.nli.settings import NLISettings


class LanguageNLIJudge:
    """Routes each sentence to the NLI model of its language; see the module docstring."""

    name = "nli"

    def __init__(self, settings: NLISettings, build: Callable[[NLISettings], Any]) -> None:
        """`build(settings)` makes the `NLIJudge` of one model (`settings.model` set to it)."""
        self.settings = settings
        self._build = build
        self._judges: dict[str, Any] = {}
        self.version = "+".join(f"{code}={model}" for code, model in settings.models)
        self._counts: Counter[str] = Counter()

    def judge_for(self, model: str) -> Any:
        """The loaded judge of one model (built on first use)."""
        found = self._judges.get(model)
        if found is None:
            found = self._judges[model] = self._build(dataclasses.replace(self.settings, model=model, models=()))
        return found

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgment]:
        out: list[Judgment | None] = [None] * len(items)
        by_model: dict[str, list[int]] = {}
        for pos, item in enumerate(items):
            model = self.settings.model_for(item.language)
            self._counts[f"language:{item.language}"] += 1
            if model is None:
                out[pos] = unjudged(LANGUAGE_UNSUPPORTED, self.name, self.version)
                self._counts[LANGUAGE_UNSUPPORTED] += 1
            else:
                by_model.setdefault(model, []).append(pos)
        for model, positions in by_model.items():
            judgments = self.judge_for(model).judge([items[pos] for pos in positions])
            for pos, judgment in zip(positions, judgments, strict=True):
                out[pos] = judgment
        return [j for j in out if j is not None]

    def stats(self) -> dict[str, Any]:
        """Each loaded model's counters, their numeric sums, and sentences per language."""
        per_model = {model: judge.stats() for model, judge in self._judges.items()}
        totals: Counter[str] = Counter()
        for stats in per_model.values():
            totals.update({k: v for k, v in stats.items() if isinstance(v, int | float) and not isinstance(v, bool)
                           and k not in ("threshold", "batch_size", "max_length", "chunk_tokens", "padding_share",
                                         "pairs_per_second", "model_pairs_per_second")})
        return {
            **dict(totals),
            "judge": self.name,
            "version": self.version,
            "models": dict(self.settings.models),
            "by_model": per_model,
            "sentences_by_language": {k.split(":", 1)[1]: v for k, v in sorted(self._counts.items())
                                      if k.startswith("language:")},
            LANGUAGE_UNSUPPORTED: self._counts[LANGUAGE_UNSUPPORTED],
        }
