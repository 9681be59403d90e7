"""Figures traceable to the cited text (SPEC §3 item 5): no model, 100% of traffic.

`find_figures(text, language)` finds the figures of a text: numbers written with digits (the
language's decimal mark and digit grouping with commas, dots, spaces or apostrophes understood,
the Indian grouping "12,34,567", the digits of every Unicode numbering system read (Arabic-Indic
"٣٠", Persian, Devanagari, Thai, full-width: "٣٠ يومًا" and "30 يومًا" are one figure), ordinals
such as 20th), cardinal number words from two upward (in the languages `text2num` reads: en, de,
fr, es, it, pt, nl), percentages (the sign after the number or, as CLDR writes Turkish, before it),
amounts with a currency, dates and times, each with its normalised `value`:

| kind | value |
|---|---|
| `number` | a plain decimal: "1000", "2.5" |
| `percent` | "2.5%" |
| `amount` | the number and its ISO 4217 code: "220 EUR" |
| `date` | ISO 8601: "2026-12-31"; no year "--12-31"; month and year "2026-12" |
| `time` | "HH:MM" (24 hours) |

A date candidate that does not parse ("31 February 2026") is not a figure, never a guess, and its
digits are not read as numbers either.

`trace_figures(figures, passages, language)` decides `traced`: some passage states a figure of
the same kind and value, whatever the written form. A bare number and an amount or a percentage
of the same value trace each other (one side may leave the unit out); two currencies, or a
currency and a percent, must agree. A date without a year traces a dated day with the same month
and day. The words around a figure are not compared: that is the judge's job.

Libraries: `babel` (the language's decimal mark, month names, currency symbols and names),
`text2num` (number words), `dateparser` (the day and month order of a numeric date in the language).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from citecheck.core.languages import DEFAULT_LANGUAGE, primary_language

NUMBER, PERCENT, AMOUNT, DATE, TIME = "number", "percent", "amount", "date", "time"
FIGURE_KINDS = (NUMBER, PERCENT, AMOUNT, DATE, TIME)
# The currencies whose symbols and names are read in running text (ISO codes: every code babel
# knows). Earlier codes win a shared symbol ("$" is USD, "¥" JPY, unless the language says otherwise).
COMMON_CURRENCIES = ("EUR", "USD", "GBP", "JPY", "CHF", "CNY", "INR", "CAD", "AUD", "SEK", "NOK", "DKK",
                     "PLN", "CZK", "BRL", "MXN", "KRW", "RUB", "TRY", "ZAR", "HKD", "SGD", "NZD")
# Words that make a number a percentage, per language (the "%" sign is read everywhere).
PERCENT_WORDS = {
    "en": ("percent", "per cent", "percentage points"), "de": ("Prozent", "prozent"),
    "fr": ("pour cent", "pourcent"), "es": ("por ciento",), "it": ("per cento", "percento"),
    "pt": ("por cento",), "nl": ("procent",),
}
TEXT2NUM_LANGUAGES = frozenset({"en", "de", "fr", "es", "it", "pt", "nl"})

# Every pattern that starts with a digit opens with `(?=\d)`: the regex engine then skips to the
# next digit instead of trying its lookbehind at every character (twice as fast on long passages).
# Same-length replacements so that spans found in the read text are spans of the written text.
_WIDE = {0xFF0C: ",", 0xFF0E: ".", 0xFF05: "%", 0xFF1A: ":", 0xFFE5: "¥", 0xFFE0: "¢", 0xFFE1: "£", 0xFF04: "$",
         0x2212: "-", 0x066B: ".", 0x066C: ","}


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure of a text: as written (`text`, its span), its `kind` and normalised `value`;
    `traced` once `trace_figures` has decided it (None: no resolved cited passage to trace in)."""

    text: str
    kind: str
    value: str
    start: int = 0
    end: int = 0
    traced: bool | None = None

    def as_dict(self) -> dict[str, object]:
        return {"text": self.text, "kind": self.kind, "value": self.value, "traced": self.traced}


# --- reading ------------------------------------------------------------------------------------


class _DigitMap(dict[int, int | str]):
    """`str.translate` table, filled as characters are met: full-width marks and Unicode decimal
    digits to ASCII, every other character to itself."""

    def __missing__(self, code: int) -> int | str:
        ch = chr(code)
        value: int | str = code
        if code in _WIDE:
            value = _WIDE[code]
        elif ch.isdigit() and not ch.isascii():
            digit = unicodedata.decimal(ch, None)  # a digit with no decimal value ("²") stays itself
            value = code if digit is None else str(digit)
        self[code] = value
        return value


_DIGIT_MAP = _DigitMap()


def _ascii_digits(text: str) -> str:
    """Unicode decimal digits (full-width, Arabic-Indic, ...) and full-width marks as ASCII, one
    character for one, so offsets are unchanged."""
    return text if text.isascii() else text.translate(_DIGIT_MAP)


@lru_cache(maxsize=64)
def _locale_marks(language: str) -> tuple[str, str]:
    """(decimal mark, group mark) of the language, from babel's CLDR data."""
    from babel.core import UnknownLocaleError
    from babel.numbers import get_decimal_symbol, get_group_symbol

    try:
        return get_decimal_symbol(language), get_group_symbol(language)
    except (UnknownLocaleError, ValueError):
        return ".", ","


_GROUP_CHARS = ",.'\u2019 \u00a0\u202f"
# A digit number: grouped thousands (comma, dot, apostrophe or a space, groups of three), or the
# Indian grouping CLDR gives hi, bn, mr … ("12,34,567.5": twos, then a three), then an optional
# decimal part; or plain digits with an optional decimal part.
_NUM = (r"\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?(?![\d])"
        r"|\d{1,3}(?:[,.'\u2019\u00a0\u202f ]\d{3})+(?:[.,]\d+)?(?![\d])"
        r"|\d+(?:[.,]\d+)?")
_NUMBER_RE = re.compile(rf"(?=\d)(?<![0-9.,])(?:{_NUM})")
_PERCENT_SIGNS = "%\u066a\ufe6a"  # % ٪ ﹪ (full-width ％ reads as %)
_NO_NUMBER_BEFORE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-")  # glued to a word
_DIGIT = re.compile(r"\d")
_ORDINAL_SUFFIX = re.compile(r"(?:st|nd|rd|th|er|e|ème|eme|º|ª|o|a)\b")


def parse_number(token: str, language: str = DEFAULT_LANGUAGE) -> Decimal | None:
    """A digit number as written in the language → Decimal ("1.000,5" in de → 1000.5).

    Both marks present: the last one is the decimal mark. One mark repeated: grouping. One mark
    once: the language's decimal mark is a decimal; the other mark followed by exactly three
    digits is grouping, else a decimal. Spaces and apostrophes are always grouping.
    """
    if token.isascii() and token.isdigit():  # plain digits, the common case
        return Decimal(token)
    t = _ascii_digits(token.strip())
    for ch in "'\u2019 \u00a0\u202f":
        t = t.replace(ch, "")
    if not t or not re.fullmatch(r"[\d.,]+", t) or not t[0].isdigit() or not t[-1].isdigit():
        return None
    decimal_mark, _ = _locale_marks(primary_language(language))
    commas, dots = t.count(","), t.count(".")
    if commas and dots:
        dec = "," if t.rfind(",") > t.rfind(".") else "."
        whole, _, frac = t.rpartition(dec)
        t = whole.replace("," if dec == "." else ".", "") + "." + frac
        if "," in whole and "." in whole:
            return None
    elif commas + dots:
        mark = "," if commas else "."
        if commas + dots > 1:
            t = t.replace(mark, "")
        else:
            whole, _, frac = t.partition(mark)
            grouping = mark != decimal_mark and len(frac) == 3
            t = whole + frac if grouping else whole + "." + frac
    try:
        return Decimal(t)
    except InvalidOperation:
        return None


def plain_decimal(value: Decimal) -> str:
    """A Decimal as a plain decimal string: no exponent, no trailing zeros ("2.50" → "2.5")."""
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"


@lru_cache(maxsize=64)
def _currencies(language: str) -> tuple[re.Pattern[str], dict[str, str]]:
    """A pattern of the currency symbols, ISO codes and names read in this language, and each
    one's ISO 4217 code (keys lower-cased)."""
    from babel import Locale
    from babel.core import UnknownLocaleError
    from babel.numbers import get_currency_name, list_currencies

    try:
        locale = Locale.parse(language)
    except (UnknownLocaleError, ValueError):
        locale = Locale.parse(DEFAULT_LANGUAGE)
    english = Locale.parse(DEFAULT_LANGUAGE)
    table: dict[str, str] = {}
    for loc in (locale, english):
        for code in COMMON_CURRENCIES:
            symbol = loc.currency_symbols.get(code)
            if symbol and symbol != code:
                table.setdefault(symbol.lower(), code)
    for symbol, code in (("€", "EUR"), ("$", "USD"), ("£", "GBP"), ("¥", "JPY"), ("₹", "INR"), ("₩", "KRW"),
                         ("₽", "RUB"), ("₺", "TRY"), ("元", "CNY"), ("円", "JPY"), ("fr.", "CHF")):
        table.setdefault(symbol.lower(), code)
    words: dict[str, str] = {}
    for loc in (locale, english):
        for code in COMMON_CURRENCIES:
            for count in (1, 2):
                name = get_currency_name(code, count=count, locale=loc)
                if not name or name == code:
                    continue
                words.setdefault(name.lower(), code)
                last = name.split()[-1].lower()
                if len(last) >= 3 and last.isalpha():
                    words.setdefault(last, code)
    codes = {code.lower(): code for code in list_currencies() if len(code) == 3 and code.isalpha()}
    alternatives = sorted(table, key=len, reverse=True)
    named = sorted(words, key=len, reverse=True)
    pattern = re.compile(
        "(?:" + "|".join(re.escape(s) for s in alternatives) + ")"
        + r"|\b(?:" + "|".join(re.escape(w) for w in named) + r")\b"
        + r"|\b(?:" + "|".join(code for code in sorted(codes.values())) + r")\b",
        re.IGNORECASE,
    )
    return pattern, {**codes, **words, **table}


@lru_cache(maxsize=64)
def _patterns(language: str) -> dict[str, re.Pattern[str]]:
    """The language's figure patterns (percent, amount, dates by month name)."""
    currency, _ = _currencies(language)
    words = PERCENT_WORDS.get(language, ()) + (PERCENT_WORDS["en"] if language != "en" else ())
    percent_words = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    # anchored where a number ends (a unit after it) or where it starts (a currency before it)
    percent_after = re.compile(rf"\s?(?:[{_PERCENT_SIGNS}]|(?:{percent_words})\b)")
    cur = currency.pattern
    currency_after = re.compile(rf"\s?(?P<cur>{cur})", re.IGNORECASE)
    months = _month_names(language)
    month = "(?:" + "|".join(re.escape(m) for m in sorted(months, key=len, reverse=True)) + ")"
    day = r"(?P<day>\d{1,2})(?:st|nd|rd|th|er|\.|º)?"
    of = r"(?:\s+de)?"
    year = r"(?P<year>\d{4})"
    date_words = re.compile(
        rf"(?<![\w.,])(?:{day}{of}\s+(?P<m1>{month})(?![\w])(?:,?{of}\s+{year})?"
        rf"|(?P<m2>{month})\s+(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?(?!\d)(?:,?\s+(?P<year2>\d{{4}}))?"
        rf"|(?P<m3>{month}){of}\s+(?P<year3>\d{{4}}))(?![\w])"
    )
    return {"percent_after": percent_after, "currency_after": currency_after,
            "date_words": date_words}


@lru_cache(maxsize=64)
def _month_numbers(language: str) -> dict[str, int]:
    """Month names (wide and abbreviated, format and stand-alone) of the language as babel writes
    them, lower-cased, with and without a final dot → the month's number; digits-only forms (ja,
    zh) are left to the numeric patterns."""
    from babel import Locale
    from babel.core import UnknownLocaleError

    try:
        locale = Locale.parse(language)
    except (UnknownLocaleError, ValueError):
        locale = Locale.parse(DEFAULT_LANGUAGE)
    numbers: dict[str, int] = {}
    for context in ("format", "stand-alone"):
        for width in ("wide", "abbreviated"):
            for month, name in locale.months[context][width].items():
                if any(ch.isdigit() for ch in name):
                    continue
                base = name.rstrip(".")
                if len(base) < 3:
                    continue
                numbers.setdefault(name.lower(), month)
                numbers.setdefault(base.lower(), month)
    return numbers


@lru_cache(maxsize=64)
def _month_names(language: str) -> tuple[str, ...]:
    """The month names `_month_numbers` knows, as written and capitalised (the date pattern's words)."""
    names: set[str] = set()
    for name in _month_numbers(language):
        names.update({name, name[:1].upper() + name[1:]})
    return tuple(names)


_ISO_DATE = re.compile(r"(?=\d)(?<![\w.\-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\w\-])")
_NUMERIC_DATE = re.compile(r"(?=\d)(?<![\w.,/\-])(\d{1,2})([./])(\d{1,2})\2(\d{4}|\d{2})(?![\w/]|\.\d)")
_CJK_DATE = re.compile(r"(?=\d)(?:(?P<year>\d{4})年)?(?P<month>\d{1,2})月(?:(?P<day>\d{1,2})日)?")
_TIME = re.compile(
    r"(?=\d)(?:(?<![\w.:,])(?P<h>\d{1,2})(?::(?P<m>\d{2})|h(?P<m2>\d{2})?(?![a-z]))"
    r"(?:\s?(?P<ap>[ap])\.?\s?m\.?(?![a-z]))?(?!\d|:\d)"
    r"|(?<![\w.:,])(?P<h3>\d{1,2})\s?(?P<ap3>[ap])\.?m\.?(?![a-z])"
    r"|(?<![\w.:,])(?P<h4>\d{1,2})(?:[.:](?P<m4>\d{2}))?\s?Uhr\b)",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def _parse_date(text: str, language: str) -> tuple[tuple[int, int, int], tuple[str, ...]] | None:
    """A written date through dateparser: ((year, month, day), the parts written), or None."""

    data = _date_parser(language).get_date_data(text)
    if data is None or data.date_obj is None:
        return None
    d = data.date_obj
    return (d.year, d.month, d.day), tuple(getattr(data, "parts", ()) or ())


# Detected or logged codes dateparser has no data for, read as the language it has (a macrolanguage's
# member, a variety's standard): Norwegian `no` as Bokmål, Arabic dialects as Arabic, Wu as Chinese.
DATEPARSER_ALIASES = {"no": "nb", "arz": "ar", "ary": "ar", "wuu": "zh", "gom": "kok", "sdh": "ckb", "uzs": "uz"}


@lru_cache(maxsize=256)
def dateparser_language(language: str) -> str:
    """The language dateparser reads a date in: the code itself, its alias, else the default
    (dateparser refuses an unknown code only once it parses, inside `get_date_data`)."""
    from dateparser.data.languages_info import language_order

    code = DATEPARSER_ALIASES.get(language, language)
    return code if code in language_order else DEFAULT_LANGUAGE


@lru_cache(maxsize=16)
def _date_parser(language: str) -> Any:
    from dateparser.date import DateDataParser

    return DateDataParser(languages=[dateparser_language(language)], settings={"PREFER_DAY_OF_MONTH": "first"})


def _date_value(ymd: tuple[int, int, int], has_year: bool, has_day: bool) -> str:
    year, month, day = ymd
    if has_year and has_day:
        return f"{year:04d}-{month:02d}-{day:02d}"
    if has_year:
        return f"{year:04d}-{month:02d}"
    return f"--{month:02d}-{day:02d}"


@dataclass(frozen=True, slots=True)
class _Read:
    """The text figures are read from: digits as ASCII, number words as digits, and the map from
    each read segment back to the written text."""

    text: str
    segments: tuple[tuple[int, int, int, int], ...]  # (read start, read end, written start, written end), replaced

    def written(self, start: int, end: int) -> tuple[int, int]:
        """The written span of a read span."""
        return _to_written(self.segments, start, is_end=False), _to_written(self.segments, end, is_end=True)


def _to_written(segments: Sequence[tuple[int, int, int, int]], pos: int, *, is_end: bool) -> int:
    """A read position in the written text: inside a replaced segment, the segment's written
    start (or end); after segments, shifted by their change of length."""
    shift = 0
    for r_start, r_end, w_start, w_end in segments:
        if is_end and r_start < pos <= r_end:
            return w_end
        if not is_end and r_start <= pos < r_end:
            return w_start
        if r_end <= pos:
            shift = w_end - r_end
    return pos + shift


# Takes a read span with its kind and value (None, None: a span that is no figure).
_Add = Callable[[int, int, str | None, str | None], None]
_WORD_TOKEN = re.compile(r"\S+")
_CONVERTED = re.compile(r"^(\W*)(\d+(?:[.,]\d+)?)(\W*)$")


def _read(text: str, language: str) -> _Read:
    """Digits as ASCII, then cardinal number words from two upward as digits (text2num's
    `alpha2digit`); word ordinals and "one"/"a" stay words."""
    ascii_text = _ascii_digits(text)
    if language not in TEXT2NUM_LANGUAGES:
        return _Read(ascii_text, ())
    from text_to_num import alpha2digit

    converted = alpha2digit(ascii_text, language, threshold=2)
    if converted == ascii_text:
        return _Read(ascii_text, ())
    import difflib

    written = list(_WORD_TOKEN.finditer(ascii_text))
    read = converted.split()
    ops = difflib.SequenceMatcher(None, [m.group() for m in written], read, autojunk=False).get_opcodes()
    replacements: list[tuple[int, int, str]] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag != "replace":
            continue
        pairs = (list(zip(range(i1, i2), range(j1, j2), strict=True)) if i2 - i1 == j2 - j1
                 else [((i1, i2), j1)] if j2 - j1 == 1 else [])
        for i, j in pairs:
            first, last = (i, i) if isinstance(i, int) else (i[0], i[1] - 1)
            m = _CONVERTED.match(read[j])
            if m is None:  # an ordinal word ("1st", "20th") or a mixed token: left as written
                continue
            number = Decimal(m.group(2).replace(",", "."))
            if number < 2:
                continue
            w_start = written[first].start() + len(m.group(1))
            w_end = written[last].end() - len(m.group(3))
            if w_end <= w_start:
                continue
            replacements.append((w_start, w_end, m.group(2)))
    if not replacements:
        return _Read(ascii_text, ())
    out, segments, pos, shift = [], [], 0, 0
    for w_start, w_end, digits in replacements:
        out.append(ascii_text[pos:w_start])
        r_start = w_start + shift
        out.append(digits)
        segments.append((r_start, r_start + len(digits), w_start, w_end))
        shift += len(digits) - (w_end - w_start)
        pos = w_end
    out.append(ascii_text[pos:])
    return _Read("".join(out), tuple(segments))


# --- finding ------------------------------------------------------------------------------------


def find_figures(text: str, language: str = DEFAULT_LANGUAGE) -> tuple[Figure, ...]:
    """Every figure of `text` in the order written, `traced` not yet decided (None)."""
    return _find(text, primary_language(language))


@lru_cache(maxsize=8192)
def _find(text: str, language: str) -> tuple[Figure, ...]:
    if language not in TEXT2NUM_LANGUAGES and not _DIGIT.search(text):
        return ()
    read = _read(text, language)
    rt = read.text
    if not _DIGIT.search(rt):
        return ()
    taken_starts: list[int] = []  # the spans taken, disjoint, sorted by start (a lookup per span, not a scan)
    taken_ends: list[int] = []
    found: list[tuple[int, int, str, str]] = []  # read start, read end, kind, value

    def free(start: int, end: int) -> bool:
        i = bisect.bisect_right(taken_starts, start)
        if i and taken_ends[i - 1] > start:
            return False
        return i == len(taken_starts) or taken_starts[i] >= end

    def add(start: int, end: int, kind: str | None, value: str | None) -> None:
        """Take the span; a kind of None (a date that did not parse) takes it with no figure."""
        if not free(start, end):
            return
        i = bisect.bisect_right(taken_starts, start)
        taken_starts.insert(i, start)
        taken_ends.insert(i, end)
        if kind is not None and value is not None:
            found.append((start, end, kind, value))

    pats = _patterns(language)
    _dates(rt, language, pats, add)
    _times(rt, add)
    codes = _currencies(language)[1]
    for m in _NUMBER_RE.finditer(rt):
        start, end = m.start(), m.end()
        if not free(start, end):
            continue
        number = parse_number(m.group(), language)
        if number is None:
            continue
        before = _currency_before(rt, start, language) if start else None
        glued = start and rt[start - 1] in _NO_NUMBER_BEFORE  # "S3", "v4.2", "-5": no figure of its own
        if glued and before is None:
            continue
        percent = pats["percent_after"].match(rt, end)
        if percent is None and start and rt[start - 1] in _PERCENT_SIGNS:  # "%25": CLDR's Turkish order
            add(start - 1, end, PERCENT, f"{plain_decimal(number)}%")
            continue
        after = None if percent is not None else pats["currency_after"].match(rt, end)
        if after is not None and not _joined(rt, after.end()):
            code = codes.get(after.group("cur").lower())
            if code is not None:
                add(start, after.end(), AMOUNT, f"{plain_decimal(number)} {code}")
                continue
        if before is not None and percent is None:
            add(before[0], end, AMOUNT, f"{plain_decimal(number)} {before[1]}")
            continue
        if glued:
            continue
        if percent is not None:
            add(start, percent.end(), PERCENT, f"{plain_decimal(number)}%")
            continue
        suffix = _ORDINAL_SUFFIX.match(rt, end)
        if suffix is not None and "." not in m.group() and "," not in m.group():
            end = suffix.end()
        add(start, end, NUMBER, plain_decimal(number))
    figures = []
    for start, end, kind, value in sorted(found):
        w_start, w_end = read.written(start, end)
        figures.append(Figure(text=text[w_start:w_end], kind=kind, value=value, start=w_start, end=w_end))
    return tuple(figures)


@lru_cache(maxsize=64)
def _currencies_by_ending(language: str) -> dict[str, tuple[str, ...]]:
    """The language's currency keys (lower-cased symbols, codes, names) by how they end: the run
    of letters they end with, or their last character when it is no letter; longest first."""
    by_ending: dict[str, list[str]] = {}
    for key in _currencies(language)[1]:
        by_ending.setdefault(_ending(key, len(key)) or key[-1], []).append(key)
    return {ending: tuple(sorted(keys, key=len, reverse=True)) for ending, keys in by_ending.items()}


def _ending(text: str, end: int, most: int = 40) -> str:
    """The run of letters (at most `most`) that ends at `end`, lower-cased."""
    begin = end
    while begin > max(0, end - most) and text[begin - 1].isalpha():
        begin -= 1
    return text[begin:end].lower()


def _currency_before(text: str, start: int, language: str) -> tuple[int, str] | None:
    """A currency written just before a number at `start` (one space between at most):
    (where it starts, its ISO code), the longest one; None when there is none. Only the keys
    that end as the text does there are tried (a key ending in letters ends with a tail of the
    text's run of letters), not every length of every key."""
    end = start - 1 if start and text[start - 1] in " \u00a0\u202f" else start
    if not end:
        return None
    by_ending = _currencies_by_ending(language)
    run = _ending(text, end)
    candidates = [key for i in range(len(run)) for key in by_ending.get(run[i:], ())] if run \
        else list(by_ending.get(text[end - 1].lower(), ()))
    table = _currencies(language)[1]
    for key in sorted(candidates, key=len, reverse=True):
        begin = end - len(key)
        if begin >= 0 and text[begin:end].lower() == key and not _joined(text, begin):
            return begin, table[key]
    return None


def _joined(text: str, position: int) -> bool:
    """Does a Latin word go on across `position` ("5 EURO" + "S": no currency ends there)?"""
    return 0 < position < len(text) and text[position - 1] in _LATIN and text[position] in _LATIN


_LATIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _dates(rt: str, language: str, pats: dict[str, re.Pattern[str]], add: _Add) -> None:
    """Dates: ISO, numeric (31.12.2026, 12/31/2026: dateparser reads the language's order), CJK
    (2026年12月31日) and with month names (babel's month names); a candidate that is no date
    ("31 February 2026") is taken as no figure."""
    for m in _ISO_DATE.finditer(rt):
        year, month, day = (int(g) for g in m.groups())
        ok = _valid_ymd(year, month, day)
        add(m.start(), m.end(), DATE if ok else None, _date_value((year, month, day), True, True) if ok else None)
    for m in _NUMERIC_DATE.finditer(rt):
        parsed = _parse_date(m.group(), language)
        add(m.start(), m.end(), DATE if parsed else None, _date_value(parsed[0], True, True) if parsed else None)
    for m in _CJK_DATE.finditer(rt):
        year, month, day = m.group("year"), int(m.group("month")), m.group("day")
        if year is None and day is None:
            continue
        ymd = (int(year) if year else 2000, month, int(day) if day else 1)
        ok = _valid_ymd(*ymd)
        add(m.start(), m.end(), DATE if ok else None,
            _date_value(ymd, year is not None, day is not None) if ok else None)
    months = _month_numbers(language)
    for m in pats["date_words"].finditer(rt):
        # the pattern has read the day, month name and year: babel's month number, no date parser
        name = m.group("m1") or m.group("m2") or m.group("m3")
        day, year = m.group("day") or m.group("day2"), m.group("year") or m.group("year2") or m.group("year3")
        month = months.get(name.lower())
        ymd = (int(year) if year else 2000, month or 0, int(day) if day else 1)
        ok = month is not None and _valid_ymd(*ymd)
        add(m.start(), m.end(), DATE if ok else None,
            _date_value(ymd, year is not None, day is not None) if ok else None)


def _valid_ymd(year: int, month: int, day: int) -> bool:
    import datetime

    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return True


def _times(rt: str, add: _Add) -> None:
    """Times: 9:00, 17:30, 5 pm, 5:30 p.m., 14h30, 14 Uhr, 14.30 Uhr → "HH:MM"."""
    for m in _TIME.finditer(rt):
        hour = m.group("h") or m.group("h3") or m.group("h4")
        minute = m.group("m") or m.group("m2") or m.group("m4") or "00"
        ap = (m.group("ap") or m.group("ap3") or "").lower()
        if m.group("h") and m.group("m") is None and m.group("m2") is None and not ap and "h" not in m.group().lower():
            continue
        h, mi = int(hour), int(minute)
        if ap:
            if not 1 <= h <= 12:
                add(m.start(), m.end(), None, None)
                continue
            h = h % 12 + (12 if ap == "p" else 0)
        if h > 23 or mi > 59:
            add(m.start(), m.end(), None, None)
            continue
        add(m.start(), m.end(), TIME, f"{h:02d}:{mi:02d}")


def clear_caches() -> None:
    """Forget the figures read so far (texts and dates): a fresh process's state (the bench)."""
    _find.cache_clear()
    _parse_date.cache_clear()


# --- tracing ------------------------------------------------------------------------------------


def _unit(figure: Figure) -> tuple[str, str, str]:
    """(kind group, number, unit): numbers, percents and amounts compare their numbers."""
    if figure.kind == PERCENT:
        return ("quantity", figure.value[:-1], "%")
    if figure.kind == AMOUNT:
        number, _, code = figure.value.partition(" ")
        return ("quantity", number, code)
    if figure.kind == NUMBER:
        return ("quantity", figure.value, "")
    return (figure.kind, figure.value, "")


def same_figure(stated: Figure, cited: Figure) -> bool:
    """Does the cited figure state the same thing as the sentence's? Same kind and value; a bare
    number matches an amount or a percentage of the same number (either side may leave the unit
    out), two units must agree; a date without a year matches a dated day with the same month and day."""
    a, b = _unit(stated), _unit(cited)
    if a[0] != b[0]:
        return False
    if a[0] == DATE and a[1] != b[1]:
        if a[1].startswith("--") and len(b[1]) == 10:
            return b[1][4:] == a[1][1:]
        if b[1].startswith("--") and len(a[1]) == 10:
            return a[1][4:] == b[1][1:]
        return False
    return a[1] == b[1] and (a[2] == b[2] or not a[2] or not b[2])


def figures_added(text: str, source: str, language: str = DEFAULT_LANGUAGE) -> tuple[Figure, ...]:
    """The figures of `text` that `source` does not state (a claim's against its sentence, SPEC
    §2.1): a figure is stated when `source` has one of the same kind group and value, whatever the
    written form ("forty", "40"), and with the same unit when `text` gives one (a currency or a
    percent `source` lacks is added; one `text` leaves out is not)."""
    figures = find_figures(text, language)
    if not figures:
        return ()
    stated: dict[tuple[str, str], set[str]] = {}
    for figure in find_figures(source, language):
        group, value, unit = _unit(figure)
        stated.setdefault((group, value), set()).add(unit)
    added = []
    for figure in figures:
        group, value, unit = _unit(figure)
        units = stated.get((group, value))
        if units is None or (unit and unit not in units):
            added.append(figure)
    return tuple(added)


def trace_figures(figures: Iterable[Figure], passages: Sequence[str] | None,
                  language: str = DEFAULT_LANGUAGE) -> tuple[Figure, ...]:
    """Each figure with `traced` decided against the texts of the sentence's resolved cited
    passages; `passages` None or empty (no resolved citation with text): `traced` stays None."""
    figures = tuple(figures)
    if not figures:
        return ()
    if not passages:
        return tuple(_traced(f, None) for f in figures)
    indices = [_cited_index(text, language) for text in passages]
    return tuple(_traced(f, any(_in_index(f, index) for index in indices)) for f in figures)


@lru_cache(maxsize=256)
def _cited_index(text: str, language: str) -> dict[tuple[str, str], frozenset[str]]:
    """A cited text's figures by (kind group, value) → their units, built once per text: tracing a
    sentence's figure is a lookup, not a scan of every figure of the cited document (an answer
    of 2,000 sentences citing one long document was quadratic). A full date is also filed under
    its month and day (`--MM-DD`), which a date stated without a year matches."""
    index: dict[tuple[str, str], set[str]] = {}
    for figure in find_figures(text, language):
        group, value, unit = _unit(figure)
        index.setdefault((group, value), set()).add(unit)
        if group == DATE and len(value) == 10 and not value.startswith("--"):
            index.setdefault((DATE, "-" + value[4:]), set()).add(_FULL_DATE)
    return {key: frozenset(units) for key, units in index.items()}


_FULL_DATE = "full date"  # the unit under which a full date is filed by its month and day


def _in_index(stated: Figure, index: dict[tuple[str, str], frozenset[str]]) -> bool:
    """`same_figure(stated, g)` for some figure g of the indexed cited text."""
    group, value, unit = _unit(stated)
    if group == DATE:
        if (DATE, value) in index:  # the same date, or a date without a year matching a full one's day
            return True
        return len(value) == 10 and not value.startswith("--") and (DATE, "-" + value[4:]) in index and any(
            u != _FULL_DATE for u in index[(DATE, "-" + value[4:])])
    units = index.get((group, value))
    return bool(units) and (not unit or unit in units or "" in units)


def _traced(figure: Figure, traced: bool | None) -> Figure:
    return Figure(figure.text, figure.kind, figure.value, figure.start, figure.end, traced)
