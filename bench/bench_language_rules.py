"""How the answers of each default language split, with the language's rules against English-only
rules (what every answer got before languages): sentences right / total per language.

Reads `tests/fixtures/language_answers.json` (answers in en, de, fr, es, it, pt, nl, ja, zh with
abbreviations, markers before and after the stop, offers, questions, refusals and figures; each
sentence as a reader splits it, with its labels and non-claim reason). A sentence is right when
the parser gives one sentence with the same text, the same labels and the same check-worthiness
reason. Run: `.venv/bin/python bench/bench_language_rules.py`.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from bench_hot_spots import cpu_name

from citecheck.core.config import Config
from citecheck.core.languages import turn_language
from citecheck.core.parsing import parse_answer
from citecheck.core.structural import check_worthiness

TABLE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "language_answers.json"


def _right(answer: str, want: list[list], config: Config, language: str | None) -> int:
    got = [[s.text, list(s.labels), check_worthiness(s.text, config, language)[1]]
           for s in parse_answer(answer, config, language)]
    pool = [json.dumps(w, ensure_ascii=False) for w in want]
    hits = 0
    for sentence in got:
        key = json.dumps(sentence, ensure_ascii=False)
        if key in pool:
            pool.remove(key)
            hits += 1
    return hits


def main() -> None:
    rows = json.loads(TABLE.read_text(encoding="utf-8"))["answers"]
    config = Config()
    totals: Counter[str] = Counter()
    own: Counter[str] = Counter()
    english: Counter[str] = Counter()
    detected: Counter[str] = Counter()
    started = time.perf_counter()
    for row in rows:
        lang = row["language"]
        totals[lang] += len(row["sentences"])
        found = turn_language({}, row["answer"]).code
        own[lang] += _right(row["answer"], row["sentences"], config, found)
        english[lang] += _right(row["answer"], row["sentences"], config, "en")
        detected[lang] += found == lang
    seconds = time.perf_counter() - started
    print(f"CPU: {cpu_name()}; {len(rows)} answers, {sum(totals.values())} sentences "
          f"({seconds:.2f} s); the language detected from the text, as for a turn that logs none")
    print(f"{'language':<9}{'answers':>8}{'detected':>10}{'own rules':>12}{'English rules':>15}")
    for lang in totals:
        n = sum(1 for r in rows if r["language"] == lang)
        print(f"{lang:<9}{n:>8}{detected[lang]:>7}/{n:<2}{own[lang]:>8}/{totals[lang]:<3}{english[lang]:>11}/{totals[lang]:<3}")
    print(f"{'all':<9}{len(rows):>8}{sum(detected.values()):>7}/{len(rows):<2}{sum(own.values()):>8}/"
          f"{sum(totals.values()):<3}{sum(english.values()):>11}/{sum(totals.values()):<3}")


if __name__ == "__main__":
    main()
