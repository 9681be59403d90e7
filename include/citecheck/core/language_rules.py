"""The rules that follow a turn's language (SPEC §2.2): where sentences end (the segmenter's
language and the abbreviations a sentence never ends on) and which sentences are offers,
questions to the user or refusals.

Shipped defaults for en, de, fr, es, it, pt, nl, ja and zh (`DEFAULTS`). English and every
language without defaults (and `und`) use the `[segmentation]` and `[check_worthiness]` sections
of the configuration, as before languages existed; `[languages.<code>]` sections extend a
language's `abbreviations` and `refusals` and replace its `non_claim_patterns` and
`refusal_patterns` (`citecheck.core.config`). Patterns are searched, case-insensitively, in the
sentence as `normalise_for_match` gives it (whitespace collapsed, case folded, curly quotes
straight). Questions to the user (ending in ? or ？, or opening with ¿) are non-claims in every
language (`[check_worthiness] questions_are_non_claims`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

_OPENERS = "([{\"'\u00ab\u201c\u2018\u00bf\u00a1"  # ( [ { " ' « “ ‘ ¿ ¡
_ELISION = re.compile(r"^\w{1,3}['\u2019]")  # l'art. d'env. dell'art.
DEFAULT_LANGUAGE = "en"  # the language of the `[segmentation]` / `[check_worthiness]` sections


@dataclass(frozen=True)
class LanguageDefaults:
    """One language's shipped rules."""

    abbreviations: tuple[str, ...]
    non_claim_patterns: tuple[str, ...]
    refusal_patterns: tuple[str, ...]


DEFAULTS: dict[str, LanguageDefaults] = {
    "de": LanguageDefaults(
        abbreviations=("z. b.", "z.b.", "vgl.", "abs.", "nr.", "bzw.", "ca.", "s.", "u. a.", "u.a.", "d. h.", "d.h.",
                       "evtl.", "ggf.", "inkl.", "exkl.", "zzgl.", "mind.", "max.", "min.", "bspw.", "lt.", "gem.",
                       "sog.", "ziff.", "art.", "tel.", "str.", "dr.", "hr.", "fr."),
        non_claim_patterns=(
            r"^(?:bitte )?lass(?:en sie|t)? (?:mich|uns) (?:es )?wissen\b",
            r"^(?:falls|wenn) sie (?:noch )?(?:weitere |andere |mehr )?(?:fragen|hilfe|informationen)\b",
            r"^(?:ich )?hoffe,? (?:das|dies|es) hilft\b",
            r"^(?:gerne|gern) (?:helfe ich|geschehen|stehe ich)\b",
            r"^(?:kann|darf) ich (?:ihnen )?(?:sonst )?(?:noch )?(?:etwas|weiter)\b",
            r"^(?:zögern sie nicht|melden sie sich gerne|sprechen sie mich gerne an)\b",
            r"^(?:ich stehe|stehe) (?:ihnen )?(?:gerne )?(?:für|bei) (?:weitere|rückfragen|fragen)\b",
            r"^hier (?:ist|sind)\b[^.]*:$",
        ),
        refusal_patterns=(
            r"^(?:leider |es tut mir leid,? (?:aber )?)?(?:ich (?:kann|konnte)|(?:kann|konnte) ich)\b[^.]*"
            r"\b(?:nicht|keine|nichts)\b[^.]*\b(?:finden|beantworten)\b",
            r"^(?:leider )?(?:die|das|diese) (?:bereitgestellten |vorliegenden )?(?:dokumente?|quellen?|unterlagen)\b"
            r"[^.]*\b(?:enthalten|enthält|erwähnen|erwähnt|nennen|nennt) (?:dazu )?(?:nichts|keine)\b",
            r"^(?:das|dies|dazu) (?:steht|findet sich) (?:leider )?(?:nicht|nichts) in\b",
        )),
    "fr": LanguageDefaults(
        abbreviations=("p. ex.", "p.ex.", "cf.", "art.", "env.", "chap.", "vol.", "p.", "pp.", "éd.", "av.", "min.",
                       "max.", "réf.", "n. b.", "c.-à-d.", "mme.", "mlle."),
        non_claim_patterns=(
            r"^n'hésitez pas\b",
            r"^(?:faites|dites)-(?:moi|le-moi) (?:savoir)?\b",
            r"^(?:si vous avez|pour toute|en cas de) (?:d'autres |des |autre )?(?:questions?|besoin|doute)\b",
            r"^(?:voulez|souhaitez|désirez|aimeriez)-vous\b",
            r"^(?:j'espère que|en espérant que) (?:cela|ceci|ça) (?:vous )?(?:aide|aidera|aura aidé)\b",
            r"^je (?:reste|suis) à (?:votre )?(?:entière )?disposition\b",
            r"^(?:puis|pourrais)-je\b",
            r"^voici\b[^.]*:$",
        ),
        refusal_patterns=(
            r"^(?:(?:je suis )?désolée?,? (?:mais )?)?je ne (?:trouve|peux|parviens|vois|suis)\b[^.]*"
            r"\b(?:pas|aucune?|rien)\b",
            r"^(?:les|ces) (?:documents?|sources?|passages?) (?:fournis |fournies )?ne (?:contiennent|mentionnent|"
            r"disent|précisent|couvrent)\b",
        )),
    "es": LanguageDefaults(
        abbreviations=("p. ej.", "p.ej.", "art.", "núm.", "pág.", "págs.", "aprox.", "sr.", "sra.", "dr.", "dra.",
                       "ud.", "uds.", "vol.", "cap.", "ej.", "máx.", "mín."),
        non_claim_patterns=(
            r"^(?:avíseme|avísame|hágame saber|hazme saber|dígame|dime) (?:si|cuando)\b",
            r"^no dude(?:s)? en\b",
            r"^si (?:tiene|tienes|necesita|necesitas) (?:alguna |otra |más )?(?:preguntas?|dudas?|ayuda|algo más)\b",
            r"^espero que (?:esto |esta información )?(?:le |te )?(?:ayude|sirva|resulte útil)\b",
            r"^(?:quedo|estoy|sigo) a (?:su|tu) (?:entera )?disposición\b",
            r"^¿?(?:quiere|quieres|desea|deseas|le gustaría|te gustaría)\b",
            r"^aquí (?:tiene|tienes|está|están)\b[^.]*:$",
        ),
        refusal_patterns=(
            r"^(?:lo siento,? (?:pero )?)?no (?:encuentro|he encontrado|pude encontrar|puedo (?:encontrar|responder)|"
            r"logro encontrar)\b",
            r"^(?:los|las|estos|estas) (?:documentos?|fuentes?|pasajes?)(?: proporcionad[oa]s)? no (?:contienen|"
            r"mencionan|dicen|incluyen)\b",
        )),
    "it": LanguageDefaults(
        abbreviations=("ad es.", "cfr.", "art.", "pag.", "pagg.", "sig.", "dott.", "prof.", "vol.", "cap.",
                       "n.", "es.", "ca."),
        non_claim_patterns=(
            r"^(?:mi faccia|fammi|mi fate) sapere\b",
            r"^non (?:esiti|esitare|esitate)\b",
            r"^(?:se (?:ha|hai|avete) bisogno|per (?:qualsiasi|ulteriori|altre) "
            r"(?:domand|informazion|dubb|chiariment))",
            r"^spero che (?:questo|ciò|queste informazioni) (?:la |ti |vi )?(?:aiuti|sia utile|siano utili)\b",
            r"^(?:resto|rimango|sono) a (?:sua|tua|vostra) (?:completa )?disposizione\b",
            r"^(?:vuole|vuoi|desidera|desideri|le piacerebbe)\b",
            r"^ecco\b[^.]*:$",
        ),
        refusal_patterns=(
            r"^(?:mi dispiace,? (?:ma )?)?non (?:trovo|riesco a trovare|ho trovato|posso rispondere)\b",
            r"^(?:i |le |questi |queste )(?:documenti|fonti|passaggi)(?: forniti| fornite)? non (?:contengono|"
            r"menzionano|dicono)\b",
        )),
    "pt": LanguageDefaults(
        abbreviations=("p. ex.", "p.ex.", "cf.", "art.", "pág.", "n.º", "sr.", "sra.", "dr.", "dra.", "aprox.",
                       "vol.", "cap.", "máx.", "mín."),
        non_claim_patterns=(
            r"^(?:fico|estou|continuo) à (?:sua |tua )?(?:inteira )?disposição\b",
            r"^(?:avise-me|diga-me|me avise|me diga)\b",
            r"^não hesite\b",
            r"^se (?:precisar|tiver) (?:de )?(?:mais|outras?|alguma|qualquer)\b",
            r"^espero que (?:isto|isso|esta informação) (?:o |a |te )?(?:ajude|seja útil)\b",
            r"^(?:quer|deseja|gostaria)\b",
            r"^aqui (?:está|estão)\b[^.]*:$",
        ),
        refusal_patterns=(
            r"^(?:desculpe,? (?:mas )?|lamento,? (?:mas )?)?não (?:encontro|encontrei|"
            r"consigo (?:encontrar|responder))\b",
            r"^(?:os|as|estes|estas) (?:documentos|fontes|passagens)(?: fornecid[oa]s)? não (?:contêm|mencionam|"
            r"dizem)\b",
        )),
    "nl": LanguageDefaults(
        abbreviations=("bijv.", "o.a.", "art.", "d.w.z.", "m.b.t.", "i.v.m.", "ca.", "nr.", "blz.", "evt.", "incl.",
                       "excl.", "max.", "min.", "zgn."),
        non_claim_patterns=(
            r"^laat (?:het )?(?:me|mij) (?:het )?weten\b",
            r"^(?:aarzel|schroom) niet\b",
            r"^(?:als|mocht) (?:u|je) (?:nog )?(?:meer |andere |verdere )?(?:vragen|hulp)\b",
            r"^ik hoop dat (?:dit|dat) (?:u |je )?helpt\b",
            r"^(?:wilt|wil) (?:u|je)\b",
            r"^(?:zal|kan) ik (?:u|je) (?:verder )?(?:helpen|nog)\b",
            r"^hier (?:is|zijn)\b[^.]*:$",
        ),
        refusal_patterns=(
            r"^(?:sorry,? (?:maar )?|helaas )?(?:ik kan|dat kan ik|ik vind|ik heb)\b[^.]*\bniet\b[^.]*"
            r"\b(?:vinden|gevonden|beantwoorden)\b",
            r"^de (?:aangeleverde |gegeven )?(?:documenten|bronnen|passages) (?:bevatten|vermelden|noemen) "
            r"(?:geen|niets)\b",
        )),
    "ja": LanguageDefaults(
        abbreviations=(),
        non_claim_patterns=(
            r"(?:お知らせ|ご連絡|お申し付け|お問い合わせ)(?:ください|下さい)[。！!]?$",
            r"^(?:他に|ほかに|その他)?(?:何か)?(?:ご質問|ご不明な点|ご不明点)",
            r"お気軽に",
            r"お役に立て(?:れば|ましたら|て)",
            r"^(?:何か|なにか)(?:ありましたら|あれば)",
            r"(?:しましょうか|いたしましょうか|お送りしましょうか)[？?]?$",
        ),
        refusal_patterns=(
            r"(?:見つかりません|見当たりません|記載がありません|記載されていません)(?:でした)?[。.]?$",
            r"(?:お答えできません|回答できません)",
        )),
    "zh": LanguageDefaults(
        abbreviations=(),
        non_claim_patterns=(
            r"^如(?:果)?(?:您|你)?(?:还)?有(?:任何|其他|更多)?(?:问题|疑问|需要)",
            r"请随时(?:告诉|联系|询问)",
            r"希望(?:这|以上|这些)(?:信息)?(?:对您|对你)?有(?:所)?帮助",
            r"^需要我",
            r"^(?:还有)?(?:什么|其他)(?:可以|需要)(?:帮|为)",
        ),
        refusal_patterns=(
            r"^(?:抱歉[，,]?|对不起[，,]?)?我(?:在[^。]*)?(?:找不到|没有找到|无法找到|无法回答)",
            r"(?:文档|资料|来源|政策)(?:中)?(?:没有|未)(?:提及|提到|包含|说明)",
        )),
}
LANGUAGES_WITH_DEFAULTS = (DEFAULT_LANGUAGE, *DEFAULTS)


@dataclass(frozen=True)
class LanguageRules:
    """One language's resolved rules: what parsing and check-worthiness read for its turns."""

    code: str
    abbreviations: frozenset[str]  # case-folded; "z. b." (with spaces) may end a sentence piece as "z."
    refusals: tuple[str, ...]
    refusal_patterns: tuple[str, ...]
    non_claim_patterns: tuple[str, ...]

    @property
    def segmenter_language(self) -> str:
        """The code sentencex gets (`und` segments as English)."""
        return DEFAULT_LANGUAGE if self.code == "und" else self.code

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

    def ends_with_abbreviation(self, piece: str, following: str) -> bool:
        """Does a segmenter piece end on an abbreviation (so it does not end a sentence)?"""
        tail = piece.rstrip().casefold()
        words = tail.rsplit(None, 1)
        if not words:
            return False
        word = words[-1].lstrip(_OPENERS)
        if word in self.last_words or _ELISION.sub("", word) in self.last_words:  # "(art." "l'art."
            return True
        if not self.spaced:
            return False
        nxt = following.lstrip().casefold()
        for head, rest in self.spaced:
            if tail.endswith(head) and (len(tail) == len(head) or not tail[-len(head) - 1].isalnum()) \
                    and (not rest or nxt.startswith(rest)):
                return True
        return False
