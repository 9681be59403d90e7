"""Claims: the optional unit below the sentence (SPEC §2.1).

- `split`: the splitter protocol, the configured splitter (`splitter_for`), a turn's split verified
  and set (`split_turn`, `apply_splits`)
- `verify`: a split may not add a figure or a capitalised word, nor change the polarity (negations per
  language, `data/negations.txt`), nor grow a claim past its sentence, nor an empty claim, nor exceed the limit
- `rules`: the deterministic rule splitter (`[claims] mode = "rules"`)
- `recorded`: splits read from a JSON file (`[claims] mode = "recorded"`)
- `verdicts`: claim verdicts and the sentence verdict derived from them (`partially_supported`)
"""

from __future__ import annotations

from citecheck.core.claims.recorded import ClaimsError, RecordedSplitter
from citecheck.core.claims.split import Splitter, apply_splits, split_turn, splitter_for
from citecheck.core.claims.verdicts import decide_claims, sentence_from_claims
from citecheck.core.claims.verify import RejectedSplit, split_problem

__all__ = ["ClaimsError", "RecordedSplitter", "RejectedSplit", "Splitter", "apply_splits", "decide_claims",
           "sentence_from_claims", "split_problem", "split_turn", "splitter_for"]
