"""NLI calibration pairs drawn from the bundled sample traffic, and the packaged file that holds them.

OpenVINO's static int8 export calibrates its activation ranges on (premise, hypothesis) pairs; the
judges package must not import the demo, so it reads them from
`include/citecheck/judges/nli/calibration_pairs.json`, which this module writes:

    python -m citecheck.demo.nli_pairs        # regenerate the packaged file (a test checks it is current)
"""

from __future__ import annotations

import datetime as dt
import json
from itertools import pairwise
from pathlib import Path

from citecheck.core.parsing import split_sentences
from citecheck.core.turns import turn_from_dict
from citecheck.demo.days import generate

PAIRS = 128
"""As many as `judges.nli.backends.CALIBRATION_PAIRS` uses."""
PACKAGED = Path(__file__).resolve().parents[1] / "judges" / "nli" / "calibration_pairs.json"


def calibration_pairs(limit: int = PAIRS) -> list[tuple[str, str]]:
    """(two-sentence window of a cited passage, answer sentence) pairs from the bundled sample traffic."""
    pairs: list[tuple[str, str]] = []
    for raw in generate(dt.date(2026, 1, 5), 1, turns_per_day=60).turns:
        turn = turn_from_dict(raw)
        sentences = [s for s in split_sentences(turn.answer) if len(s.split()) > 3]
        for passage, sentence in zip(turn.context, sentences, strict=False):
            parts = split_sentences(passage.text)
            windows = [f"{a} {b}" for a, b in pairwise(parts)] or parts
            pairs.append((windows[len(pairs) % len(windows)], sentence))
        if len(pairs) >= limit:
            break
    return pairs[:limit]


def packaged_text(limit: int = PAIRS) -> str:
    """The packaged file's content: one [premise, hypothesis] pair per line of a JSON list."""
    rows = ",\n".join(json.dumps(list(pair), ensure_ascii=False) for pair in calibration_pairs(limit))
    return f"[\n{rows}\n]\n"


if __name__ == "__main__":
    PACKAGED.write_text(packaged_text(), encoding="utf-8")
    print(f"wrote {PACKAGED}")
