"""Every language's rules against data others maintain (issue 38): the Moses non-breaking prefix
lists (`sentence-splitter`), Unicode's Sentence_Terminal property and question marks, CLDR's
number symbols (babel) and numbering systems, and the issue's own returns-answer examples; at
least 95% of sentences right in every shipped language. Also the one reader of language tags and
the one `und` → `en` fallback (issue 35): a restatement anywhere else in the package fails here."""

from __future__ import annotations

import ast
import tomllib
import unicodedata
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest
import regex

import citecheck
from citecheck.core.config import config_from_mapping
from citecheck.core.figures import find_figures, trace_figures
from citecheck.core.language_rules import (
    DEFAULTS,
    LANGUAGES_WITH_DEFAULTS,
    NUMERIC_ONLY,
    has_shipped_rules,
    unicode_question_marks,
)
from citecheck.core.languages import (
    DEFAULT_LANGUAGE,
    language_or_default,
    language_subtag,
    primary_language,
    read_language_tag,
)
from citecheck.core.model import Turn
from citecheck.core.parsing import parse_answer
from citecheck.core.structural import check_worthiness, structure_turn

PACKAGE = Path(citecheck.__file__).parent
DEFAULT = config_from_mapping({})
# the 30 most used languages on the web (issue 38), by the codes py3langid gives
WEB_LANGUAGES = ("en", "zh", "es", "ar", "pt", "id", "fr", "ja", "ru", "de", "ko", "tr", "it", "vi", "pl", "nl",
                 "hi", "th", "fa", "sv", "uk", "cs", "ro", "el", "hu", "he", "da", "fi", "no", "ms")


def _split(answer: str, language: str) -> list[list]:
    return [[s.text, list(s.labels), check_worthiness(s.text, DEFAULT, language)[1]]
            for s in parse_answer(answer, DEFAULT, language)]


def test_the_thirty_web_languages_ship_rules_with_a_source():
    assert set(WEB_LANGUAGES) == set(LANGUAGES_WITH_DEFAULTS)
    for code, rules in DEFAULTS.items():
        assert rules.source and rules.non_claim_patterns and rules.refusal_patterns, code
    assert has_shipped_rules("nb") and has_shipped_rules("nn") and has_shipped_rules("iw")  # aliases
    assert not has_shipped_rules("sw") and not has_shipped_rules("und")


# --- the issue's own examples (each language logged) --------------------------------------------
ISSUE_EXAMPLES = [
    ("ru", "Вы можете вернуть товар, напр. обувь, в течение 30 дней [S1]. Хотите, чтобы я отправил форму?",
     [["Вы можете вернуть товар, напр. обувь, в течение 30 дней.", ["S1"], None],
      ["Хотите, чтобы я отправил форму?", [], "question"]]),
    ("pl", "Zwroty są możliwe w ciągu 30 dni, zob. pkt 3 regulaminu [S1]. Czy mogę jeszcze w czymś pomóc?",
     [["Zwroty są możliwe w ciągu 30 dni, zob. pkt 3 regulaminu.", ["S1"], None],
      ["Czy mogę jeszcze w czymś pomóc?", [], "question"]]),
    ("tr", "İade 30 gün içinde yapılabilir, örn. ayakkabılar [S1]. Bu, sözleşmenin 3. maddesi ile düzenlenir [S2].",
     [["İade 30 gün içinde yapılabilir, örn. ayakkabılar.", ["S1"], None],
      ["Bu, sözleşmenin 3. maddesi ile düzenlenir.", ["S2"], None]]),
    ("sv", "Du kan returnera varor, t.ex. skor, inom 30 dagar [S1]. Se avsn. 3 i villkoren [S2].",
     [["Du kan returnera varor, t.ex. skor, inom 30 dagar.", ["S1"], None],
      ["Se avsn. 3 i villkoren.", ["S2"], None]]),
    ("ar", "يمكنك إرجاع المنتج خلال 30 يومًا [S1]. هل تريد أن أرسل لك النموذج؟",
     [["يمكنك إرجاع المنتج خلال 30 يومًا.", ["S1"], None], ["هل تريد أن أرسل لك النموذج؟", [], "question"]]),
    ("ar", "يمكنك إرجاع المنتج خلال 30 يومًا [S1]. إذا كان لديك أي أسئلة أخرى، فلا تتردد في سؤالي.",
     [["يمكنك إرجاع المنتج خلال 30 يومًا.", ["S1"], None],
      ["إذا كان لديك أي أسئلة أخرى، فلا تتردد في سؤالي.", [], "offer"]]),
    ("ko", "제품은 30일 이내에 반품할 수 있습니다 [S1]. 더 도움이 필요하시면 말씀해 주세요.",
     [["제품은 30일 이내에 반품할 수 있습니다.", ["S1"], None], ["더 도움이 필요하시면 말씀해 주세요.", [], "offer"]]),
    ("hi", "आप 30 दिनों के भीतर सामान लौटा सकते हैं [S1]। अगर आपको और मदद चाहिए तो मुझे बताइए।",
     [["आप 30 दिनों के भीतर सामान लौटा सकते हैं।", ["S1"], None],
      ["अगर आपको और मदद चाहिए तो मुझे बताइए।", [], "offer"]]),
    ("zh", "您可以在30天内退货[S1]。如需更多帮助，请告诉我。",
     [["您可以在30天内退货。", ["S1"], None], ["如需更多帮助，请告诉我。", [], "offer"]]),
    ("de", "Das regelt der 3. Absatz der Bedingungen [S1]. Siehe S. 12. Möchten Sie mehr wissen?",
     [["Das regelt der 3. Absatz der Bedingungen.", ["S1"], None], ["Siehe S. 12.", [], None],
      ["Möchten Sie mehr wissen?", [], "question"]]),
    ("th", "คุณสามารถคืนสินค้าได้ภายใน 30 วัน เช่น รองเท้า [S1] หากมีคำถามเพิ่มเติมโปรดแจ้งให้ฉันทราบ",
     [["คุณสามารถคืนสินค้าได้ภายใน 30 วัน เช่น รองเท้า", ["S1"], None],
      ["หากมีคำถามเพิ่มเติมโปรดแจ้งให้ฉันทราบ", [], "offer"]]),
]


@pytest.mark.parametrize(("language", "answer", "sentences"), ISSUE_EXAMPLES,
                         ids=[f"{r[0]}:{r[1][:20]}" for r in ISSUE_EXAMPLES])
def test_the_issues_returns_answers_split_and_read_as_a_reader_does(language, answer, sentences):
    turn = Turn("t1", "c1", 0, None, "q", answer, "markers", (), {"locale": f"{language}-XX"})
    structured = structure_turn(turn, DEFAULT)
    assert (structured.language, structured.language_rules_generic) == (language, False)
    assert [[s.text, list(s.labels), s.non_claim_reason] for s in structured.sentences] == sentences


# --- the maintained abbreviation lists: Moses non-breaking prefixes -------------------------------
def _moses_rows() -> list[tuple[str, str, list[list]]]:
    """Per shipped language with a Moses list: an answer around every prefix of the list ("Text
    pkt. 3 Nowak" for a numeric-only one, else before a capitalised name), which stays one sentence."""
    rows = []
    for code in sorted(DEFAULTS):
        data_file = resources.files("citecheck.core").joinpath(f"data/languages/{code}.toml")
        data = tomllib.loads(data_file.read_text("utf-8"))
        moses = data.get("moses")
        if moses is None:
            continue
        text = (resources.files("sentence_splitter") / "non_breaking_prefixes" / f"{moses}.txt").read_text("utf-8")
        for line in text.splitlines():
            numeric = line.rstrip().endswith(NUMERIC_ONLY)
            prefix = (line.replace(NUMERIC_ONLY, "") if numeric else line.split("#", 1)[0]).strip()
            if not prefix or prefix.isdigit():
                continue
            first = f"Text {prefix}. {'3 Nowak' if numeric else 'Nowak'} kauft"
            rows.append((code, f"{first} [S1]. Ende.", [[f"{first}.", ["S1"], None], ["Ende.", [], None]]))
    return rows


MOSES_ROWS = _moses_rows()


def test_every_moses_prefix_keeps_its_sentence_whole_in_at_least_95_percent_per_language():
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    wrong: dict[str, list[str]] = {}
    for language, answer, sentences in MOSES_ROWS:
        total[language] += len(sentences)
        got = _split(answer, language)
        right[language] += sum(1 for s in got if s in sentences)
        if got != sentences:
            wrong.setdefault(language, []).append(answer)
    assert len(total) >= 17  # cs da de el es fi fr hu it nl no pl pt ro ru sv tr
    low = {lang: f"{right[lang]}/{total[lang]} {wrong[lang][:3]}" for lang in total if right[lang] < 0.95 * total[lang]}
    assert not low, low


# --- Unicode: every script's stops and question marks -----------------------------------------
TERMINALS = [chr(c) for c in range(0x20, 0x20000) if regex.match(r"\p{Sentence_Terminal}", chr(c))
             and chr(c) not in ".\uff0e\u2024\ufe52"]  # the full stops: abbreviations decide those


@pytest.mark.parametrize("language", ["sw", "hy", "am", "my", "ur"])  # no shipped rules: the generic ones
def test_every_sentence_terminal_of_unicode_ends_a_sentence_in_a_language_without_rules(language):
    wrong = [hex(ord(t)) for t in TERMINALS
             if [s.text for s in parse_answer(f"Aaa bbb{t} Ccc ddd{t}", DEFAULT, language)]
             != [f"Aaa bbb{t}", f"Ccc ddd{t}"]]
    assert len(wrong) <= 0.05 * len(TERMINALS), wrong


def test_every_question_mark_unicode_names_makes_a_question():
    marks = unicode_question_marks()
    assert {"?", "\uff1f", "\u061f", "\u1367", "\u037e", "\u2047", "\u055e"} <= set(marks)
    rules = DEFAULT.rules_for("sw")
    assert rules.generic
    assert all(rules.is_question(f"Unataka fomu{q}") for q in marks if q != "\u055e")
    assert rules.is_question("Ուզու՞մ եք ձևաթուղթը։")  # Armenian: the mark sits on the asked word
    assert DEFAULT.rules_for("el").is_question("Θέλετε βοήθεια;")  # Greek writes ";"
    assert not DEFAULT.rules_for("en").is_question("See the terms; they apply.")


def test_a_language_without_shipped_rules_is_read_by_the_generic_rules_and_counted():
    turn = Turn("t1", "c1", 0, None, "q", "Unaweza kurudisha bidhaa ndani ya siku 30 [S1]. Je, unataka fomu?",
                "markers", (), {"language": "sw"})
    structured = structure_turn(turn, DEFAULT)
    assert structured.language == "sw" and structured.language_rules_generic
    assert [s.non_claim_reason for s in structured.sentences] == [None, "question"]
    english = structure_turn(Turn("t2", "c1", 1, None, "q", "Returns take 30 days [S1].", "markers", (),
                                  {"language": "en"}), DEFAULT)
    assert not english.language_rules_generic


def test_a_language_section_overrides_a_new_languages_offers():
    config = config_from_mapping({"languages": {"ru": {"non_claim_patterns": ["^спасибо"]}}})
    assert check_worthiness("Спасибо за вопрос.", config, "ru") == (False, "offer")
    assert check_worthiness("Если у вас остались вопросы, дайте мне знать.", config, "ru") == (True, None)
    assert check_worthiness("Если у вас остались вопросы, дайте мне знать.", DEFAULT, "ru") == (False, "offer")


# --- figures: CLDR's marks and every numbering system ----------------------------------------
ZEROS = {"arab": "\u0660", "arabext": "\u06f0", "deva": "\u0966", "thai": "\u0e50", "beng": "\u09e6",
         "fullwide": "\uff10", "latn": "0"}
NUMBERING = [("ar", "arab"), ("fa", "arabext"), ("hi", "deva"), ("th", "thai"), ("ja", "fullwide"),
             ("bn", "beng"), *((code, "latn") for code in WEB_LANGUAGES)]


@pytest.mark.parametrize(("language", "system"), NUMBERING, ids=[f"{lang}-{ns}" for lang, ns in NUMBERING])
def test_cldr_numbers_in_every_numbering_system_read_as_the_same_figure(language, system):
    from babel.numbers import format_decimal, format_percent

    def native(text: str) -> str:
        return "".join(chr(ord(ZEROS[system]) + int(ch)) if ch.isascii() and ch.isdigit() else ch for ch in text)

    cldr_system = system if system in {"arab", "arabext"} else "latn"  # marks: CLDR's for the system
    for value, want in ((1234567.5, "1234567.5"), (2.75, "2.75"), (30, "30")):
        written = native(format_decimal(value, locale=language, numbering_system=cldr_system))
        figures = find_figures(f"x {written} x", language)
        assert [f.value for f in figures] == [want], (written, figures)
    percent = native(format_percent(0.25, locale=language, numbering_system=cldr_system))
    assert [f.value for f in find_figures(percent, language)] == ["25%"], percent


def test_the_same_days_in_arabic_indic_and_ascii_digits_trace_each_other():
    figures = find_figures("يمكنك الإرجاع خلال ٣٠ يومًا", "ar")
    assert [(f.value, f.traced) for f in trace_figures(figures, ["المهلة 30 يومًا"], "ar")] == [("30", True)]
    persian = find_figures("ظرف ۳۰ روز", "fa")
    assert [(f.value, f.traced) for f in trace_figures(persian, ["30 روز"], "fa")] == [("30", True)]
    thai = find_figures("ภายใน ๓๐ วัน", "th")
    assert [(f.value, f.traced) for f in trace_figures(thai, ["30 วัน"], "th")] == [("30", True)]


# --- one reader of language tags, one fallback ------------------------------------------------
def test_one_reader_reads_every_tag_with_one_rule():
    assert read_language_tag("de-CH") == ("de", True)
    assert read_language_tag("de_CH") == ("de", False)  # a POSIX locale: its language, not well formed
    assert read_language_tag("pt_BR.UTF-8") == ("pt", False)
    assert read_language_tag("123") == (None, False)
    assert language_subtag("de_CH") is None and primary_language("de_CH") == "de"
    assert language_or_default("und") == language_or_default(None) == language_or_default("") == DEFAULT_LANGUAGE
    assert language_or_default("sw") == "sw"


def _package_sources() -> list[tuple[Path, ast.AST]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(PACKAGE.rglob("*.py"))]


def test_no_module_restates_the_tag_reader_or_the_und_fallback():
    """`und` is written only in `core/languages.py` (everyone else says UNDETERMINED or asks
    `language_or_default`); no module defines its own default language or splits a tag itself."""
    home = PACKAGE / "core" / "languages.py"
    found = []
    for path, tree in _package_sources():
        if path == home:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value == "und":
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: the literal 'und'")
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in {
                    "DEFAULT_LANGUAGE", "UNDETERMINED", "UNDETERMINED_AS"} for t in node.targets):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: a default language of its own")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace" \
                    and [getattr(a, "value", None) for a in node.args[:2]] == ["_", "-"]:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: a language tag read by hand")
    assert not found, found


def test_unicode_names_are_the_source_of_the_question_marks():
    assert all("QUESTION MARK" in unicodedata.name(q) for q in unicode_question_marks())
