"""How well the parser reproduces human statement splits and citation sets (Liu et al. 2023).

Data: `bench/data/liu2023_verifiability/responses.json`, 114 answers of four generative
search engines with the annotators' statement split (`statements_to_citation_texts`: statement
text with its markers → the markers that belong to it), 372 statements in all.

A statement is *reproduced* when one sentence of `parse_answer(response)` has the same text and
the same citation set. The responses log no language: each is parsed in the language the product
detects for it (`citecheck.core.languages.turn_language`), as the job would. Normalisation,
applied to the annotators' side only where our parser's output has no counterpart by definition:
- markers (`[n]`) are deleted from the statement text, and the citation set is the labels of its
  markers (`[3]` → `3`), the same label our parser reports;
- a leading list bullet (`•`, `-`, `*`) is deleted, since the judge's text never carries one;
- texts are compared **ignoring whitespace** (all whitespace removed on both sides): a marker glued
  between two words (`1970[2]and`) leaves `1970and` in the annotators' text where our parser
  writes `1970 and`; whitespace is not what this benchmark measures. The stricter figure (single
  spaces, no space before punctuation, no other change) is printed too.
Nothing else is normalised: case, quotes and punctuation must match, and boundaries must match.

Run: `.venv/bin/python bench/bench_liu2023.py [--data PATH] [--show N]`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from citecheck.core.config import Config
from citecheck.core.languages import turn_language
from citecheck.core.parsing import parse_answer

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data" / "liu2023_verifiability" / "responses.json"
GOAL = 0.98
EXPECTED_STATEMENTS = 372

_MARKER = re.compile(r"\s*\[(\d+)\]")
_LEAD_BULLET = re.compile(r"^\s*(?:[\u2022\u2023\u25aa\u25e6\u25cf]|[-*](?=\s))\s*")
_GLYPH = re.compile(r"[\u2022\u2023\u25aa\u25e6\u25cf]")
_WS = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+(?=[.,;:!?])")


def loose(text: str) -> str:
    """Whitespace-insensitive comparison key."""
    return _WS.sub("", text)


def strict(text: str) -> str:
    """Single spaces, no space before punctuation."""
    return _SPACE_BEFORE_PUNCT.sub("", _WS.sub(" ", text).strip())


def annotated_statement(statement: str) -> str:
    """The annotators' statement as the judge would see it: markers and a leading bullet removed."""
    return _LEAD_BULLET.sub("", _MARKER.sub("", statement))


def classify(key: str, ours: list[str]) -> str:
    """Why a statement's text was not reproduced: over-split, under-split or a different cut.

    Bullet glyphs the annotators kept inside a statement are ignored here (classification only).
    """
    key = _GLYPH.sub("", key)
    if any(key in o and key != o for o in ours):
        return "under-split (merged with a neighbour)"
    for i in range(len(ours)):
        joined = ""
        for j in range(i, len(ours)):
            joined += ours[j]
            if joined == key and j > i:
                return "over-split (one statement, several sentences)"
            if not key.startswith(joined):
                break
    return "boundary elsewhere"


def evaluate(records: list[dict], config: Config) -> dict:
    totals: Counter[str] = Counter()
    misses: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        language = turn_language({}, record["response"]).code
        totals[f"language:{language}"] += 1
        parsed = parse_answer(record["response"], config, language)
        ours = [(loose(p.text), strict(p.text), frozenset(p.labels)) for p in parsed]
        totals["our_sentences"] += len(parsed)
        unused_loose = Counter((k, labels) for k, _, labels in ours)
        unused_strict = Counter((s, labels) for _, s, labels in ours)
        for statement, citation_texts in record["statements_to_citation_texts"].items():
            totals["statements"] += 1
            text = annotated_statement(statement)
            labels = frozenset(m.group(1) for c in citation_texts for m in _MARKER.finditer(c))
            key, skey = loose(text), strict(text)
            if unused_strict[(skey, labels)] > 0:
                unused_strict[(skey, labels)] -= 1
                totals["reproduced_strict"] += 1
            if unused_loose[(key, labels)] > 0:
                unused_loose[(key, labels)] -= 1
                totals["reproduced"] += 1
                continue
            same_text = [o for o in ours if o[0] == key]
            if same_text:
                totals["text_ok_labels_wrong"] += 1
                kind = "citation set differs (text right)"
                got = sorted(same_text[0][2])
            else:
                kind = classify(key, [o[0] for o in ours])
                near = [p.text for p, o in zip(parsed, ours, strict=True) if o[0] in key or key in o[0]]
                got = near or [p.text for p in parsed]
            misses[kind].append({"system": record["system_name"], "id": record["id"][:12],
                                 "statement": strict(text), "labels": sorted(labels), "ours": got})
    totals["text_reproduced"] = totals["statements"] - sum(
        len(v) for k, v in misses.items() if not k.startswith("citation"))
    return {"totals": totals, "misses": misses}


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} = {100 * n / d:.1f}%" if d else "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--show", type=int, default=5, help="examples per miss kind")
    args = parser.parse_args(argv)
    records = json.loads(args.data.read_text(encoding="utf-8"))
    config = Config()
    result = evaluate(records, config)
    t, misses = result["totals"], result["misses"]
    n = t["statements"]
    share = t["reproduced"] / n if n else 0.0
    print(f"liu2023_verifiability: {len(records)} responses, {n} annotated statements "
          f"(expected {EXPECTED_STATEMENTS}), our sentences {t['our_sentences']}")
    print(f"marker pattern: {config.marker_pattern}")
    print("detected languages: " + ", ".join(f"{k.split(':', 1)[1]} {v}" for k, v in sorted(t.items())
                                             if k.startswith("language:")))
    print()
    print(f"{'measure':<58}{'value':>18}")
    print(f"{'text + citation set reproduced (whitespace-insensitive)':<58}{_pct(t['reproduced'], n):>18}")
    print(f"{'text + citation set reproduced (strict whitespace)':<58}{_pct(t['reproduced_strict'], n):>18}")
    print(f"{'text reproduced (any citation set)':<58}{_pct(t['text_reproduced'], n):>18}")
    print(f"{'goal':<58}{f'>= {GOAL:.0%}':>18}")
    print(f"{'met':<58}{'yes' if share >= GOAL else 'NO':>18}")
    print()
    print("misses by kind:")
    for kind, items in sorted(misses.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(items):3d}  {kind}")
        for item in items[: args.show]:
            print(f"       [{item['system']} {item['id']}] annotators: {item['statement']!r} {item['labels']}")
            if kind.startswith("citation"):
                print(f"           ours: labels {item['ours']}")
            else:
                for sentence in item["ours"]:
                    print(f"           ours: {sentence!r}")
    return 0 if n == EXPECTED_STATEMENTS else 1


if __name__ == "__main__":
    sys.exit(main())
