"""Language detection on short answers: lingua-language-detector against py3langid, side by side.

Reads `bench/data/short_answers_languages.json` (one- or two-sentence answers in the nine default
languages, markers included; markers are stripped as `citecheck.core.languages` does) and prints,
per detector: accuracy (per language and overall), mean time per answer after loading, and the
load time. Run: `.venv/bin/python bench/bench_language_detection.py` (prints the CPU).

The product uses `citecheck.core.languages.detect_language` (the last row): its choice of
detector and settings is what this bench measured.
"""

from __future__ import annotations

import json
import platform
import time
from collections import Counter
from pathlib import Path

from bench_hot_spots import cpu_name  # bench/ is on the path when run as a script

DATA = Path(__file__).parent / "data" / "short_answers_languages.json"
REPEAT = 5


def _lingua(languages: str, low_accuracy: bool):
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    if languages == "all":
        builder = LanguageDetectorBuilder.from_all_languages()
    else:
        builder = LanguageDetectorBuilder.from_iso_codes_639_1(
            *[getattr(IsoCode639_1, c.upper()) for c in languages.split(",")])
    if low_accuracy:
        builder = builder.with_low_accuracy_mode()
    detector = builder.with_preloaded_language_models().build()

    def detect(text: str) -> str:
        found = detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found else "und"
    return detect


def _langid():
    import py3langid

    py3langid.classify("warm up")  # loads the model
    return lambda text: py3langid.classify(text)[0]


def _product():
    from citecheck.core.languages import detect_language

    detect_language("warm up")
    return lambda text: detect_language(text)


def main() -> None:
    from citecheck.core.languages import detection_text

    answers = [(lang, detection_text(text)) for lang, text in json.loads(DATA.read_text())["answers"]]
    print(f"CPU: {cpu_name()} ({platform.machine()}), {len(answers)} short answers, "
          f"mean {sum(len(t) for _, t in answers) / len(answers):.0f} characters, {REPEAT} passes")
    common = "en,de,fr,es,it,pt,nl,ja,zh,pl,sv,da,nb,fi,cs,ru,uk,tr,ar,ko,hi,el,hu,ro"
    candidates = [
        ("py3langid (97 languages)", _langid),
        ("lingua, all 75 languages, high accuracy", lambda: _lingua("all", False)),
        ("lingua, all 75 languages, low accuracy", lambda: _lingua("all", True)),
        (f"lingua, {len(common.split(','))} common languages, high accuracy", lambda: _lingua(common, False)),
        ("citecheck.core.languages.detect_language", _product),
    ]
    print(f"{'detector':58} {'accuracy':>9} {'us/answer':>10} {'load s':>7}  wrong by language")
    for name, build in candidates:
        started = time.perf_counter()
        detect = build()
        loaded = time.perf_counter() - started
        wrong: Counter[str] = Counter()
        started = time.perf_counter()
        for _ in range(REPEAT):
            for lang, text in answers:
                if detect(text) != lang:
                    wrong[lang] += 1
        per = (time.perf_counter() - started) / (REPEAT * len(answers)) * 1e6
        right = len(answers) - sum(wrong.values()) / REPEAT
        misses = ", ".join(f"{k}:{v // REPEAT}" for k, v in sorted(wrong.items())) or "-"
        print(f"{name:58} {right:>4.0f}/{len(answers):<4} {per:>10.0f} {loaded:>7.2f}  {misses}")


if __name__ == "__main__":
    main()
