"""Sample answers in other languages (SPEC §2.2): German, French, Spanish and Japanese turns
(data/languages.json), opt-in (`generate(..., language_turns=N)`, `citecheck sample
--language-turns N`), from their own random stream, so the English sample stays as recorded.

Each language has its own policy passages, retrieved together in one fixed order, so a claim's
supporting label is the same in every turn and the recorded judge stays exact. Answers carry the
language's abbreviations ("vgl. Abs. 1", "p. ex.", "p. ej."), figures written its way (decimal
comma; full-width digits in the Japanese passages), markers before or after the stop (Japanese:
before or after 。 with no space), offers, questions to the user and refusals. Most turns log
their locale; some log none (the language is detected) and a few a malformed one (`de_DE`:
detected, counted as an input repair).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from typing import Any

from citecheck.demo.answers import Conversation, Sent
from citecheck.demo.knowledge import read_data
from citecheck.demo.traffic import attributes, pick

NO_SPACE_LANGUAGES = frozenset(("ja", "zh"))  # sentences follow each other with no space
KIND_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("supported", 72), ("miscited", 8), ("uncited", 8), ("unsupported", 9), ("padded", 3))


@dataclass(frozen=True)
class LanguagePassage:
    label: str
    source: str
    text: str
    question: str
    claims: tuple[str, ...]
    wrong: tuple[str | None, ...]  # wrong[k]: claims[k] with a detail wrong (None: no such sentence)


@dataclass(frozen=True)
class SampleLanguage:
    code: str
    weight: float
    locales: tuple[tuple[str, float], ...]
    passages: tuple[LanguagePassage, ...]
    offers: tuple[str, ...]
    questions: tuple[str, ...]
    refusal: str


@cache
def sample_languages() -> tuple[SampleLanguage, ...]:
    """The languages of data/languages.json, in file order."""
    out = []
    for code, row in read_data("languages.json")["languages"].items():
        passages = tuple(LanguagePassage(f"S{i + 1}", p["source"], p["text"], p["question"], tuple(p["claims"]),
                                         tuple(p["wrong"])) for i, p in enumerate(row["passages"]))
        out.append(SampleLanguage(code, float(row["weight"]), tuple((tag, float(w)) for tag, w in row["locales"]),
                                  passages, tuple(row["offers"]), tuple(row["questions"]), row["refusal"]))
    return tuple(out)


def language_statements() -> list[tuple[str, tuple[str, ...]]]:
    """Every statement the language turns can write, with the label that supports it."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for lang in sample_languages():
        for p in lang.passages:
            out += [(c, (p.label,)) for c in p.claims] + [(w, ()) for w in p.wrong if w is not None]
        out += [(t, ()) for t in (*lang.offers, *lang.questions, lang.refusal)]
    return out


def _render(sent: Sent, after_stop: bool) -> str:
    """The sentence with its markers before its final stop, or after it."""
    if not sent.labels:
        return sent.body
    marker = "".join(f"[{label}]" for label in sent.labels)
    stop = sent.body[-1]
    if after_stop or stop not in ".!?\u3002\uff01\uff1f":
        return f"{sent.body}{marker}" if stop in "\u3002\uff01\uff1f" else f"{sent.body} {marker}"
    return f"{sent.body[:-1]}{marker}{stop}" if stop in "\u3002\uff01\uff1f" else f"{sent.body[:-1]} {marker}{stop}"


def _claims(rng: random.Random, lang: SampleLanguage, primary: LanguagePassage) -> list[Sent]:
    """One to three claims about the asked-about passage (sometimes one of another), each drawn as
    one failure kind; labels are the passages' fixed labels."""
    others = [p for p in lang.passages if p is not primary]
    pool = [(primary, k) for k in range(len(primary.claims))]
    rng.shuffle(pool)
    n = rng.choices((1, 2, 3), weights=(30, 45, 25))[0]
    chosen = pool[:n]
    if n >= 2 and rng.random() < 0.2:
        other = rng.choice(others)
        chosen[-1] = (other, rng.randrange(len(other.claims)))
    sents: list[Sent] = []
    for passage, k in chosen:
        claim = passage.claims[k]
        kind = pick(rng, KIND_WEIGHTS)
        wrong_label = rng.choice(others).label
        wrong = passage.wrong[k] if k < len(passage.wrong) else None  # gets claims[k]'s detail wrong
        if kind == "unsupported" and wrong is not None:
            sent = Sent(wrong, kind, [passage.label])
        elif kind == "miscited" or kind == "unsupported":  # a claim with no wrong twin: miscited instead
            kind = "miscited"
            sent = Sent(claim, kind, [wrong_label], supported_by=(passage.label,))
        elif kind == "uncited":
            sent = Sent(claim, kind, [], supported_by=(passage.label,))
        elif kind == "padded":
            sent = Sent(claim, kind, [passage.label, wrong_label], supported_by=(passage.label,))
        else:
            sent = Sent(claim, "supported", [passage.label], supported_by=(passage.label,))
        if sent.body not in {s.body for s in sents}:
            sents.append(sent)
    return sents


def language_turn(rng: random.Random, conv_id: str) -> tuple[dict[str, Any], list[Sent]]:
    """One markers-format turn in a language drawn by weight: its attributes (the locale as the
    app logs it), context, answer and the sentences it was built from."""
    languages = sample_languages()
    lang = pick(rng, [(lang.code, lang.weight) for lang in languages])
    language = next(x for x in languages if x.code == lang)
    attrs = attributes(rng)
    locale = pick(rng, language.locales)
    if locale:
        attrs["locale"] = locale
    else:
        attrs.pop("locale", None)
    conv = Conversation(conv_id, attrs)
    primary = rng.choice(language.passages)
    if rng.random() < 0.04:
        sents = [Sent(language.refusal, "refusal", check_worthy=False)]
    else:
        sents = _claims(rng, language, primary)
    if rng.random() < 0.1:
        sents.append(Sent(rng.choice(language.questions), "question", check_worthy=False))
    if rng.random() < 0.35:
        sents.append(Sent(rng.choice(language.offers), "offer", check_worthy=False))
    after_stop = rng.random() < 0.3
    joiner = "" if language.code in NO_SPACE_LANGUAGES else " "
    answer = joiner.join(_render(s, after_stop) for s in sents)
    context = [{"label": p.label, "source": p.source, "text": p.text, "document_id": f"{language.code}-{p.label}",
                "version": "2026-10"} for p in language.passages]
    turn = {"question": primary.question, "answer": answer, "answer_format": "markers", "context": context,
            "attributes": dict(conv.attributes)}
    return turn, sents
