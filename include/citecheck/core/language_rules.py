"""The rules that follow a turn's language (SPEC §2.2): where sentences end (the segmenter's
language, the abbreviations and ordinal dots a sentence never ends on, every script's stops) and
which sentences are offers, questions to the user or refusals.

Shipped rules for 30 languages, one data file each (`data/languages/<code>.toml`, with the source of
its phrases): closing offers and refusals as patterns, abbreviations beyond the maintained list,
whether the language writes ordinals with a dot ("3. Absatz", "3. maddesi": from ICU's RBNF
`%digits-ordinal`), its extra question marks (Greek ";"). Abbreviations come from the Moses
non-breaking prefix lists that `sentence-splitter` ships (`<code>.txt`; a `#NUMERIC_ONLY#` prefix,
"pkt", "Nr", only before a digit); sentencex's own lists stay underneath.

Every language, shipped or not, reads the Unicode rules: a sentence ends after any character of the
Sentence_Terminal property (। ؟ ። ။ …) and a question ends in any question mark Unicode names (? ？ ؟
፧ ; ⁇ …) or carries the Armenian ՞. In the languages of the data files a full stop followed by a
lower-case letter ends no sentence (UAX #29 rule SB8: "напр. обувь", "t.ex. skor"); English, `und`
and the generic rules keep sentencex's reading there (it knows English's abbreviations, and a
passage's "… claim. lower-case …" stays two sentences, as before). A language without shipped rules
(and `und`) gets these *generic* rules with the `[segmentation]` and `[check_worthiness]` sections,
and is counted (`language_rules_generic`); English's rules are those sections. `[languages.<code>]`
sections extend a language's `abbreviations` and `refusals` and replace its `non_claim_patterns` and
`refusal_patterns` (`citecheck.core.config`). Patterns are searched, case-insensitively, in the
sentence as `normalise_for_match` gives it (whitespace collapsed, case folded, curly quotes
straight).
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources

from citecheck.core.languages import DEFAULT_LANGUAGE, language_or_default

_OPENERS = "([{\"'\u00ab\u201c\u2018\u00bf\u00a1"  # ( [ { " ' « “ ‘ ¿ ¡
_ELISION = re.compile(r"^\w{1,3}['\u2019]")  # l'art. d'env. dell'art.
_GLUED_MAX = 8  # a dotted token this short with no space after its dot is an abbreviation ("Αίλ.Δ.", "z.B.")
_ORDINAL = re.compile(r"(?:^|[\s(])\d{1,3}\.$")  # "den 3." "sözleşmenin 3."
_DATA = "data/languages"
NUMERIC_ONLY = "#NUMERIC_ONLY#"  # a Moses prefix that holds only before a digit
MOSES_PACKAGE = "sentence_splitter"
THAI_SPACES = "thai-spaces"  # the segmenter of a script without spaces between words but between sentences


@dataclass(frozen=True)
class LanguageDefaults:
    """One language's shipped rules, as its data file and the maintained lists give them."""

    abbreviations: tuple[str, ...]
    non_claim_patterns: tuple[str, ...]
    refusal_patterns: tuple[str, ...]
    numeric_abbreviations: tuple[str, ...] = ()  # Moses #NUMERIC_ONLY#: only before a digit
    ordinal_dot: bool = False
    question_marks: str = ""  # beyond Unicode's question marks
    segmenter: str = "sentencex"
    continuations: tuple[str, ...] = ()  # words that go on a sentence after a space (Thai "เช่น")
    source: str = ""


def _moses_prefixes(code: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(prefixes, numeric-only prefixes) of the Moses list for a language, with their dot; empty
    when `sentence-splitter` ships none for it."""
    try:
        text = (resources.files(MOSES_PACKAGE) / "non_breaking_prefixes" / f"{code}.txt").read_text("utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        return (), ()
    plain: list[str] = []
    numeric: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip() if not line.rstrip().endswith(NUMERIC_ONLY) else line.strip()
        if not line or line.isdigit():  # numbers are the list's ordinals: `ordinal_dot` reads them
            continue
        if line.endswith(NUMERIC_ONLY):
            numeric.append(line[:-len(NUMERIC_ONLY)].strip() + ".")
        else:
            plain.append(line + ".")
    return tuple(plain), tuple(numeric)


def _load_defaults() -> tuple[dict[str, LanguageDefaults], dict[str, str]]:
    """Each data file's rules by its code, and each alias's code ("nb" → "no")."""
    out: dict[str, LanguageDefaults] = {}
    aliases: dict[str, str] = {}
    for entry in sorted(resources.files("citecheck.core").joinpath(_DATA).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        data = tomllib.loads(entry.read_text("utf-8"))
        code = entry.name[:-5]
        plain, numeric = _moses_prefixes(data.get("moses", "")) if data.get("moses") else ((), ())
        rules = LanguageDefaults(
            abbreviations=(*plain, *data.get("abbreviations", ())),
            non_claim_patterns=tuple(data.get("non_claim_patterns", ())),
            refusal_patterns=tuple(data.get("refusal_patterns", ())),
            numeric_abbreviations=numeric,
            ordinal_dot=bool(data.get("ordinal_dot", False)),
            question_marks="".join(data.get("question_marks", ())),
            segmenter=data.get("segmenter", "sentencex"),
            continuations=tuple(data.get("continuations", ())),
            source=data["source"],
        )
        out[code] = rules
        aliases.update((alias, code) for alias in data.get("aliases", ()))
    return out, aliases


DEFAULTS, ALIASES = _load_defaults()
LANGUAGES_WITH_DEFAULTS = (DEFAULT_LANGUAGE, *DEFAULTS)


def shipped_code(code: str | None) -> str | None:
    """The language whose shipped rules a code reads (itself, or the language of an alias: "nb" →
    "no"); None for a language without shipped rules (it gets the generic ones, and is counted)."""
    if code is None:
        return None
    code = ALIASES.get(code, code)
    return code if code == DEFAULT_LANGUAGE or code in DEFAULTS else None


def has_shipped_rules(code: str | None) -> bool:
    """Does this language have its own rules (else it gets the generic ones, and is counted)?"""
    return shipped_code(code) is not None


@lru_cache(maxsize=1)
def unicode_question_marks() -> str:
    """Every character Unicode names a question mark (? ？ ؟ ፧ ; ⁇ ‽ …), not the inverted ¿ that
    opens one nor the ornaments."""
    marks = []
    for code in range(0x20, 0x20000):
        name = unicodedata.name(chr(code), "")
        if "QUESTION MARK" in name and not any(w in name for w in ("INVERTED", "ORNAMENT", "TURNED")):
            marks.append(chr(code))
    return "".join(marks)


@dataclass(frozen=True)
class LanguageRules:
    """One language's resolved rules: what parsing and check-worthiness read for its turns."""

    code: str
    abbreviations: frozenset[str]  # case-folded; "z. b." (with spaces) may end a sentence piece as "z."
    refusals: tuple[str, ...]
    refusal_patterns: tuple[str, ...]
    non_claim_patterns: tuple[str, ...]
    numeric_abbreviations: frozenset[str] = frozenset()
    ordinal_dot: bool = False
    question_marks: str = ""
    segmenter: str = "sentencex"
    continuations: tuple[str, ...] = ()
    lower_case_continues: bool = False  # UAX #29 SB8 (the data-file languages; English keeps its sections)

    @property
    def generic(self) -> bool:
        """No shipped rules for this language: the Unicode rules and the configured sections."""
        return not has_shipped_rules(self.code)

    @property
    def segmenter_language(self) -> str:
        """The code sentencex gets: the language's own (sentencex falls back by its own chains),
        the default for an undetermined one."""
        return language_or_default(self.code)

    @cached_property
    def questions(self) -> str:
        return unicode_question_marks() + self.question_marks

    @cached_property
    def last_words(self) -> frozenset[str]:
        """Abbreviations without a space: a sentence piece ending on one never ends a sentence."""
        return frozenset(a for a in self.abbreviations if " " not in a)

    @cached_property
    def spaced(self) -> tuple[tuple[str, str], ...]:
        """Abbreviations with spaces ("p. ex."), split at each space: (head, tail) pairs. A piece
        ending on "p. ex." or on "p." followed by a piece opening with "ex." joins the next one."""
        pairs: list[tuple[str, str]] = []
        for abbreviation in sorted(a for a in self.abbreviations if " " in a):
            pairs.append((abbreviation, ""))
            words = abbreviation.split(" ")
            pairs.extend((" ".join(words[:k]), " ".join(words[k:])) for k in range(1, len(words)))
        return tuple(pairs)

    @cached_property
    def refusal_res(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p, re.IGNORECASE) for p in self.refusal_patterns)

    @cached_property
    def non_claim_res(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p, re.IGNORECASE) for p in self.non_claim_patterns)

    def is_question(self, text: str) -> bool:
        """A question to the user: ends in one of the language's question marks (before closing
        quotes or brackets), carries the Armenian ՞ (written on the asked word), or opens with ¿."""
        stripped = text.strip()
        end = stripped.rstrip(_CLOSERS)
        return (bool(end) and end[-1] in self.questions) or "\u055e" in stripped \
            or stripped.lstrip("\"'(\u201c").startswith("\u00bf")

    def _counted(self, tail: str) -> bool:
        """Does the number ending `tail` follow an abbreviation ("pkt 3.", "Nr. 3.": a count, no ordinal)?"""
        words = tail.rsplit(None, 2)
        return len(words) >= 2 and (words[-2] + "." in self.numeric_abbreviations or words[-2] in self.last_words
                                    or words[-2] + "." in self.last_words)

    def ends_with_abbreviation(self, piece: str, following: str) -> bool:
        """Does a segmenter piece end on an abbreviation, an ordinal dot or a full stop before a
        lower-case letter (so it does not end a sentence)?"""
        tail = piece.rstrip()
        nxt = following.lstrip()
        if len(tail) == len(piece) and piece.endswith(".") and following[:1].isalpha() \
                and len(piece.rsplit(None, 1)[-1]) <= _GLUED_MAX:  # "Αίλ.Δ.": one token, cut by the segmenter
            return True
        if self.lower_case_continues and tail.endswith(".") and nxt \
                and (nxt[0].islower() or (nxt[0] in _OPENERS and nxt[1:2].islower())):
            return True  # UAX #29 SB8: no sentence starts in lower case after a full stop
        tail = tail.casefold()
        words = tail.rsplit(None, 1)
        if not words:
            return False
        word = words[-1].lstrip(_OPENERS)
        if word in self.last_words or _ELISION.sub("", word) in self.last_words:  # "(art." "l'art."
            return True
        if nxt[:1].isdigit() and word in self.numeric_abbreviations:  # "pkt 3", "Nr. 5"
            return True
        if self.ordinal_dot and nxt[:1].isalpha() and _ORDINAL.search(tail) and not self._counted(tail):
            return True  # "den 3. Absatz", not "pkt 3. Czy …"
        if not self.spaced:
            return False
        nxt = nxt.casefold()
        for head, rest in self.spaced:
            if tail.endswith(head) and (len(tail) == len(head) or not tail[-len(head) - 1].isalnum()) \
                    and (not rest or nxt.startswith(rest)):
                return True
        return False


_CLOSERS = "\"'\u201d\u2019\u00bb)\u300d\u300f\uff09"  # " ' ” ’ » ) 」 』 ）
