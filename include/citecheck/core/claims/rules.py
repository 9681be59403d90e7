"""The rule splitter (`[claims] mode = "rules"`): deterministic, no model, no network (SPEC §2.1).

It splits a sentence only where it coordinates assertions that can each be true or false alone:
independent clauses ("Returns are free, but shipping costs five euros"), coordinated predicates
sharing a subject ("The plan costs forty units and includes weekend support"), and a connective
conclusion (", so all customers qualify"). Everything else stays together: coordinated nouns and
lists ("Paris and Zurich", "meals and taxis"), alternatives (`or` never splits), a number with its
qualifiers (a conjunct without its own verb, such as "and 300 euros in London", is no claim). A
condition or scene set before the subject ("If you travel abroad, …", "For business customers, …")
or after the last conjunct behind a comma (", provided that …") qualifies every claim and is
repeated in each. Each claim is a standalone sentence: the subject (and the auxiliary, for
"can claim meals and book taxis") repeated, capitalised, ending with a full stop.

Words are read with small closed lists (auxiliaries, pronouns, determiners, condition cues) and an
open list of verbs (`data/verbs.txt`, base forms; inflections derived): no parser. spaCy's
dependency models cannot be installed with this stack (they are not on the package registry), and
a clause split needs only these cues; the choice, its speed and its agreement on the table of
`tests/unit/test_claims_rules.py` are in docs/metrics.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

AUX = frozenset((
    "is", "are", "was", "were", "be", "been", "has", "have", "had", "can", "cannot", "could", "will", "would",
    "must", "may", "might", "should", "shall", "does", "do", "did", "isn't", "aren't", "wasn't", "weren't",
    "hasn't", "haven't", "hadn't", "can't", "couldn't", "won't", "wouldn't", "mustn't", "shouldn't", "doesn't",
    "don't", "didn't", "needn't",
))
SUBJECT_PRONOUNS = frozenset(["i", "you", "he", "she", "it", "we", "they", "there", "this", "these", "those"])
PLURAL_PRONOUNS = frozenset(["i", "you", "we", "they"])
DETERMINERS = frozenset((
    "the", "a", "an", "each", "every", "all", "some", "no", "any", "its", "their", "our", "your", "his", "her",
    "this", "these", "those", "that", "most", "many", "both", "either", "neither", "several", "few", "other",
    "another", "such", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
))
ADVERBS = frozenset((
    "also", "then", "usually", "always", "never", "often", "only", "still", "further", "additionally", "generally",
    "typically", "normally", "automatically", "immediately", "directly", "currently", "now", "already", "even",
    "just",
))
CONDITION_CUES = frozenset((
    "if", "unless", "when", "whenever", "where", "while", "after", "before", "during", "since", "from", "for", "in",
    "on", "at", "under", "within", "once", "provided", "except", "outside", "with", "without", "until", "by", "as",
    "per", "upon", "between",
))
# verbs whose base form is also a common noun ("support", "cost"): after an -s word they are its object
NOUN_VERBS = frozenset((
    "access", "back", "bill", "block", "book", "cap", "change", "charge", "check", "claim", "cost", "count",
    "cover", "credit", "date", "deal", "default", "delay", "demand", "deposit", "design", "display", "drink",
    "drop", "end", "estimate", "experience", "export", "face", "fall", "file", "fit", "focus", "form", "free",
    "gain", "host", "import", "increase", "decrease", "issue", "land", "lead", "lie", "limit", "link", "list",
    "load", "lock", "log", "look", "love", "mark", "match", "measure", "mind", "mix", "move", "name", "need",
    "note", "offer", "order", "pass", "pay", "pick", "place", "plan", "play", "point", "post", "print", "process",
    "promise", "purchase", "push", "rank", "rate", "record", "refund", "release", "rent", "repair", "repeat",
    "reply", "report", "request", "reset", "rest", "result", "return", "review", "roll", "run", "sail", "save",
    "schedule", "score", "search", "set", "share", "ship", "show", "sign", "sleep", "stand", "start", "state",
    "stay", "stop", "store", "study", "suit", "supply", "support", "switch", "sync", "talk", "test", "track",
    "train", "transfer", "travel", "trigger", "turn", "update", "upgrade", "upload", "use", "view", "visit", "vote",
    "wait", "walk", "wash", "watch", "win", "wish", "work",
))
_SINGULAR_AUX = frozenset(["is", "was", "has", "does", "isn't", "wasn't", "hasn't", "doesn't"])
CONCLUSIONS = frozenset(["so", "therefore", "thus", "hence", "consequently"])
TRAILING_CONDITION = re.compile(
    r",\s+(?:if|unless|provided(?: that)?|as long as|only if|only when|except(?: for| when| if)?|subject to)\b.*$",
    re.IGNORECASE)
# where a sentence may split: a coordinator between two conjuncts (never `or`)
_JOINT = re.compile(
    r"(?:\s*;\s*(?:(?P<semi>therefore|thus|hence|however|consequently),?\s+)?"
    r"|,?\s+(?P<conj>and|but)\s+"
    r"|,\s+(?P<comma>so|therefore|thus|hence|whereas|while|consequently),?\s+)",
    re.IGNORECASE)
# -s forms of verbs the list lacks, read by their suffix ("escalates", "digitises", "notifies")
_VERB_SUFFIX = re.compile(r"(?:[^aeiou]ates|[iy][sz]es|ifies)$")
MODALS = frozenset((
    "can", "cannot", "can't", "could", "couldn't", "will", "won't", "would", "wouldn't", "must", "mustn't", "may",
    "might", "should", "shouldn't", "shall", "do", "does", "did", "don't", "doesn't", "didn't",
))
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*")
_BRACKETS = re.compile("[\\[\\](){}\"\u201c\u201d]")
_LOOKAHEAD = 240  # characters after a joint read for a subject and verb (the first seven words)
_FINAL = re.compile(r"[\s.!?;:,]+$")


@lru_cache(maxsize=1)
def _verbs() -> tuple[frozenset[str], frozenset[str]]:
    """(finite forms: -s, past; non-finite forms: base, -ed/-en participles, -ing) of the verb list."""
    finite: set[str] = set()
    nonfinite: set[str] = set()
    text = resources.files("citecheck.core.claims").joinpath("data/verbs.txt").read_text(encoding="utf-8")
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        base, *irregular = line.split()
        finite.add(_third_person(base))
        if irregular:  # "give gave given"
            finite.add(irregular[0])
            nonfinite.update((base, irregular[-1], _ing(base)))
            continue
        past = _past(base)
        finite.add(past)
        nonfinite.update((base, past, _ing(base)))
    return frozenset(finite), frozenset(nonfinite)


def _third_person(base: str) -> str:
    if base.endswith(("s", "sh", "ch", "x", "z", "o")):
        return base + "es"
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        return base[:-1] + "ies"
    return base + "s"


def _past(base: str) -> str:
    if base.endswith("e"):
        return base + "d"
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        return base[:-1] + "ied"
    return base + "ed"


def _ing(base: str) -> str:
    if base.endswith("e") and not base.endswith("ee"):
        return base[:-1] + "ing"
    return base + "ing"


def _words(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), *m.span()) for m in _WORD.finditer(text)]


def _masked(text: str) -> str:
    """The text with parenthesised and quoted spans blanked out: no split point inside them."""
    if not _BRACKETS.search(text):
        return text
    out = list(text)
    depth = 0
    quote = False
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]" and depth:
            depth -= 1
            out[i] = " "
            continue
        elif ch in "\"\u201c\u201d":
            quote = not quote
            out[i] = " "
            continue
        if depth or quote:
            out[i] = " "
    return "".join(out)


class _Clause:
    """A conjunct's subject and verb group, as far as the cues tell them."""

    __slots__ = ("aux", "subject", "verb")

    def __init__(self, subject: str, aux: str, verb: str) -> None:
        self.subject = subject
        self.aux = aux
        self.verb = verb

    @property
    def singular(self) -> bool:
        """Its verb agrees with a singular subject ("costs", "is"): a following "and includes …"
        is then a predicate of the same subject, "and refunds go …" a clause of its own."""
        verb = self.verb.lower()
        return verb in _SINGULAR_AUX or (verb.endswith("s") and verb in _verbs()[0])


def _verb_at(words: Sequence[tuple[str, int, int]], i: int, *, finite_only: bool = False) -> bool:
    """Is words[i] the verb of a clause whose subject ends at words[i - 1]?"""
    finite, nonfinite = _verbs()
    w = words[i][0].lower()
    prev = words[i - 1][0].lower() if i else ""
    if prev in DETERMINERS or prev.endswith(("'s", "\u2019s")):
        return False  # "the costs", "the plan's returns": a noun
    if w in AUX or w in finite or _VERB_SUFFIX.search(w):
        return True
    if finite_only:
        return False
    # a base form after a plural subject ("customers get", "they pay", "meetings longer than an hour
    # need"), never after a determiner
    plural = (_plural(prev) and (i == 1 or prev not in finite)) or (i > 1 and _plural(words[0][0].lower()))
    return w in nonfinite and (prev in PLURAL_PRONOUNS or plural)


def _plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "'s", "\u2019s")) and word not in AUX


def _plural_noun_before(word: str) -> bool:
    """After an -s word, a word that makes it a plural noun, not a verb: an auxiliary, or a verb's
    base form that is no noun ("hires receive"; "includes support" keeps `includes` a verb)."""
    w = word.lower()
    finite, nonfinite = _verbs()
    return w in AUX or (w in nonfinite and w not in finite and not w.endswith(("s", "ing", "ed", "en"))
                        and w not in NOUN_VERBS)


def _clause_start(text: str, *, conjunct: bool = False) -> _Clause | None:
    """The subject and auxiliary of `text` when it opens with a clause (a subject, then a verb);
    `conjunct`: text after a coordinator, where a verb first means a predicate, not a subject."""
    words = _words(text)
    if len(words) < 2:
        return None
    first = words[0][0].lower()
    finite, nonfinite = _verbs()
    if conjunct and (first in AUX or (first in nonfinite and first not in finite and not first.endswith("s")
                                       and words[1][0].lower() not in AUX and words[1][0].lower() not in finite)):
        return None  # a conjunct opening with a verb ("may not be kept", "earn points"): a predicate
    if (first in SUBJECT_PRONOUNS and first not in ("this", "these", "those")) or first == "there":
        if _verb_at(words, 1) or words[1][0].lower() in AUX:
            return _Clause(text[:words[0][2]], _aux(words, 1), words[1][0])
        return None
    for i in range(1, min(len(words), 7)):
        w = words[i][0].lower()
        if w in ("and", "or", "but", "if", "when", "that", "which", "who"):
            return None
        if _verb_at(words, i):
            if i + 1 < len(words) and w.endswith("s") and w not in AUX and _plural_noun_before(words[i + 1][0]):
                i += 1  # "hires receive", "costs are": the -s word is the subject's plural noun
            return _Clause(text[:words[i - 1][2]], _aux(words, i), words[i][0])
    return None


def _aux(words: Sequence[tuple[str, int, int]], i: int) -> str:
    """The auxiliaries opening a verb group at words[i] ("can", "must not", "can be", "has been"),
    else ""."""
    chain = []
    while i < len(words) and (words[i][0].lower() in AUX or (chain and words[i][0].lower() in ("not", "being"))):
        chain.append(words[i][0])
        i += 1
    return " ".join(chain)


def _predicate_start(text: str) -> str | None:
    """"finite" / "nonfinite" when `text` opens with a verb (after an adverb), else None."""
    finite, nonfinite = _verbs()
    words = _words(text)
    i = 0
    while i < len(words) - 1 and words[i][0].lower() in ADVERBS:
        i += 1
    if not words:
        return None
    w = words[i][0].lower()
    if w in ("be", "have", "do"):
        return "nonfinite"
    if w in AUX or (w in finite and w not in nonfinite) or _VERB_SUFFIX.search(w):
        return "finite"
    if w in finite:  # -ed: finite past or participle; read with the clause's auxiliary
        return "either"
    if w in nonfinite:
        return "nonfinite"
    return None


def _inside_range(left: str) -> bool:
    """"between 1 November and …", "both the laptop and …": this `and` closes a pair, no claim."""
    words = [w.lower() for w, _, _ in _words(left)]
    for n in range(len(words) - 1, -1, -1):
        if words[n] in ("and", "or"):
            return False
        if words[n] in ("between", "both"):
            return True
    return False


def _predicate_fits(current: _Clause, kind: str, after_semicolon: bool) -> bool:
    """Can a conjunct opening with a verb of this kind share the clause's subject? Never after a
    semicolon (there a bare verb is an instruction); a base form only after a modal ("can claim …
    and book …") or a plural present ("customers get … and pay …"), so "includes updates and
    support by e-mail" keeps its object whole."""
    if after_semicolon:
        return False
    if kind != "nonfinite":
        return True
    aux = current.aux.split(" ")[0].lower()
    if aux:
        return aux in MODALS
    finite, nonfinite = _verbs()
    verb = current.verb.lower()
    return verb in nonfinite and verb not in finite


def _sentence_case(text: str) -> str:
    text = _FINAL.sub("", text.strip())
    return text[:1].upper() + text[1:] + "." if text else ""


class RulesSplitter:
    """SPEC §2.1's rules, without a model: English sentences only (its word lists are English)."""

    name = "rules"
    languages: frozenset[str] | None = frozenset({"en"})

    def split(self, sentences: Sequence[str]) -> list[tuple[str, ...]]:
        return [split_sentence(s) for s in sentences]


def split_sentence(sentence: str) -> tuple[str, ...]:
    """The claims of one sentence (the sentence itself when nothing is independent)."""
    if _JOINT.search(sentence) is None:  # most sentences coordinate nothing: no work past this
        return (sentence,)
    body = _FINAL.sub("", sentence.strip())
    if not body:
        return (sentence,)
    prefix, main = _leading_condition(body)
    suffix = ""
    found = TRAILING_CONDITION.search(_masked(main))
    if found:
        main, suffix = main[:found.start()], main[found.start():]
    parts = _conjuncts(main)
    if len(parts) < 2:
        return (sentence,)
    if prefix:  # "In short, so you have to …": the connective follows the repeated opening
        parts = [part[:1].lower() + part[1:] if part.split(" ", 1)[0].lower() in CONCLUSIONS else part
                 for part in parts]
    return tuple(_sentence_case(f"{prefix}{part}{suffix}") for part in parts)


def _leading_condition(body: str) -> tuple[str, str]:
    """("If you travel abroad, ", rest) when the sentence opens with a condition or scene before a
    comma and a clause; else ("", body)."""
    words = _words(body)
    if not words or (words[0][0].lower() not in CONDITION_CUES and words[0][0].lower() != "as"):
        return "", body
    masked = _masked(body)
    comma = masked.find(", ")
    if comma < 0:
        return "", body
    rest = body[comma + 2:]
    if _clause_start(rest) is None:
        return "", body
    return body[:comma + 2], rest


def _conjuncts(main: str) -> list[str]:
    """The independent conjuncts of a clause, each a standalone clause (subject repeated)."""
    masked = _masked(main)
    first = _clause_start(main)
    if first is None:
        return [main]
    # candidate joints, left to right; a joint splits only when the text after it opens a clause
    # or a predicate (then the current subject is repeated)
    claims: list[str] = []
    current = first
    start = 0
    pending = ""  # what opens the next claim: a conclusion's connective, a repeated subject
    joints = list(_JOINT.finditer(masked))
    for n, joint in enumerate(joints):
        if joint.start() < start or _inside_range(main[start:joint.start()]):
            continue
        end = joints[n + 1].start() if n + 1 < len(joints) else len(main)
        right_all = main[joint.end():]
        clause = _clause_start(right_all[:_LOOKAHEAD], conjunct=True)
        kind = _predicate_start(main[joint.end():end])
        if clause is not None and kind is not None:  # "and refunds go" / "and offers support": read in parallel
            if current.singular:
                clause = None
            else:
                kind = None
        after_semicolon = joint.group("conj") is None and ";" in joint.group()
        if kind is not None and not _predicate_fits(current, kind, after_semicolon):
            kind = None
            if clause is None:
                continue
        if clause is None and kind is None:
            continue  # coordinated nouns, adjectives, a figure's alternatives: one claim
        claims.append(pending + main[start:joint.start()])
        connective = joint.group("semi") or joint.group("comma") or ""
        pending = f"{connective.capitalize()} " if connective.lower() in CONCLUSIONS else ""
        start = joint.end()
        if clause is not None:
            current = clause
        else:  # a predicate: its clause's subject (and auxiliary, before a verb that needs one) repeated
            aux = ""
            if current.aux and kind == "either":  # a participle takes the whole chain: "can be split … and used"
                aux = f" {current.aux}"
            elif current.aux and kind == "nonfinite":  # a base form takes the modal: "must wear … and be accompanied"
                modal = current.aux.split(" ")
                aux = " " + " ".join(modal[:2] if len(modal) > 1 and modal[1].lower() == "not" else modal[:1])
            pending += f"{current.subject}{aux} "
    claims.append(pending + main[start:])
    claims = [c for c in (c.strip(" ,;") for c in claims) if c]
    return claims if len(claims) > 1 else [main]
