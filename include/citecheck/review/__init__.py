"""The human review loop (issue 12): people label a weekly sample of judged sentences, the labels
measure the judges (SPEC §6) and calibrate the judged metrics.

- `sample`: the deterministic stratified sample of a period, its inclusion probabilities, and the
  blind export (CSV for a spreadsheet, JSON Lines).
- `labels`: reading and validating a labelled file (bad rows reported with line and reason).
- `proportions`: intervals for counted and weighted proportions.
- `quality`: agreement, false pass and false fail per judge and slice, Cohen's kappa, and the NLI
  threshold sweep.
- `calibrated`: prediction-powered estimates (Angelopoulos et al., Science 2023; `ppi-python`).
- `loop`: the review loop over the warehouse: export a period's sample, import labels, build, print
  and publish the period's report (judge quality, calibrated metrics).

A reviewer's `label` says whether the passages the sentence cites support it (`supported`,
`partial`, `not_supported`; a sentence that cites nothing: whether any passage of its context set
does); `partial` counts as not supported. `citation_labels` grades each cited passage alone
(`full`, `partial`, `none`), and may also name an uncited passage of the context that supports the
sentence (`S4=full`), which is what the calibrated faithfulness reads.
"""

from __future__ import annotations

from citecheck.core.vocabulary import REVIEW_LABELS as SENTENCE_LABELS
from citecheck.core.vocabulary import SUPPORT_LEVELS as CITATION_GRADES

__all__ = ["CITATION_GRADES", "SENTENCE_LABELS"]
