"""The one derivation from "which passage sets support the sentence" to a Judgment, and the two
credit rules, on hand-computed cases (`citecheck.judges.derive`)."""

from __future__ import annotations

import pytest

from citecheck.core.model import Judgment, Sentence
from citecheck.core.verdicts import decide
from citecheck.core.vocabulary import MISCITED, PARTIAL, SUPPORTED
from citecheck.judges.derive import alce_credited, derive_judgment, liu_credit
from citecheck.judges.llm import Assessment, judgment_of


def by_sets(*supporting: set[str]):
    """A set oracle: a label set supports the sentence when it contains one of `supporting`."""
    sets = [frozenset(s) for s in supporting]
    return lambda labels: any(s <= labels for s in sets)


def derive(cited, supports, **kw) -> Judgment:
    return derive_judgment(cited, supports, judge="test", judge_version="1", **kw)


def sentence(*labels: str) -> Sentence:
    return Sentence(index=0, text="A claim.", start=0, end=8, labels=labels)


def test_cited_set_supports_and_every_citation_is_needed() -> None:
    # S1 and S2 support only together: neither alone, neither without the other.
    j = derive(("S1", "S2"), by_sets({"S1", "S2"}), prefer=("S1", "S2", "S3"))
    assert j.cited and j.faithful
    assert j.alone == {"S1": False, "S2": False} and j.rest == {"S1": False, "S2": False}
    assert j.elsewhere == ()  # no single passage supports it
    v = decide(sentence("S1", "S2"), j)
    assert v.verdict == SUPPORTED and v.credited == {"S1": True, "S2": True}


def test_one_label_irrelevant() -> None:
    # S1 supports alone; S2 cannot, and the rest (S1) still supports without it: S2 is irrelevant.
    j = derive(("S1", "S2"), by_sets({"S1"}), prefer=("S1", "S2"))
    assert j.cited and j.alone == {"S1": True, "S2": False} and j.rest == {"S1": False, "S2": True}
    assert alce_credited(j, "S1", supported=True) and not alce_credited(j, "S2", supported=True)
    assert not alce_credited(j, "S1", supported=False)  # an unsupported sentence credits nothing
    assert decide(sentence("S1", "S2"), j).credited == {"S1": True, "S2": False}


def test_single_citation_has_no_rest() -> None:
    j = derive(("S1",), by_sets({"S1"}), prefer=("S1",))
    assert j.cited and j.alone == {"S1": True} and j.rest == {"S1": False}


def test_elsewhere_is_chosen_in_preference_order() -> None:
    # The citation S1 fails; S3 and S2 both support alone. Context order names S2 first …
    j = derive(("S1",), by_sets({"S2"}, {"S3"}), prefer=("S1", "S2", "S3"))
    assert not j.cited and j.elsewhere == ("S2",) and j.faithful
    v = decide(sentence("S1"), j)
    assert v.verdict == MISCITED and v.supported_elsewhere_by == ("S2",) and v.credited == {"S1": False}
    # … and a judge that ranks by its scores names its best one first.
    assert derive(("S1",), by_sets({"S2"}, {"S3"}), prefer=("S3", "S2", "S1")).elsewhere == ("S3",)


def test_uncited_passages_come_first_when_the_citations_fail() -> None:
    # A non-monotone oracle: S1 alone "supports", yet the cited set {S1, S2} does not.
    def supports(labels: frozenset[str]) -> bool:
        return labels in ({"S1"}, {"S3"})

    j = derive(("S1", "S2"), supports, prefer=("S1", "S2", "S3"))
    assert not j.cited and j.elsewhere == ("S3",)
    # When the citations do support, the first supporting passage in order is named, cited or not.
    assert derive(("S2",), by_sets({"S1"}, {"S2"}), prefer=("S1", "S2")).elsewhere == ("S1",)


def test_a_joint_set_when_no_single_passage_supports() -> None:
    j = derive(("S1",), by_sets({"S2", "S3"}), prefer=("S1", "S2", "S3"), joint_elsewhere=lambda: ("S2", "S3"))
    assert not j.cited and j.elsewhere == ("S2", "S3") and j.faithful
    assert not derive(("S1",), by_sets({"S2", "S3"}), prefer=("S1", "S2", "S3")).faithful


def test_no_citation_is_never_cited() -> None:
    j = derive((), by_sets(set()), prefer=("S1",))  # the empty set "supports" here, yet nothing is cited
    assert not j.cited and j.alone == {} and j.rest == {} and j.elsewhere == ("S1",)


def test_unanswered_sets_are_left_out() -> None:
    # A judge that answers only for S1 alone, for the cited set directly, and never for the rest.
    j = derive(
        ("S1", "S2"),
        lambda labels: True if labels == {"S1"} else None,
        together=True,
        rest_known=False,
    )
    assert j.cited and j.alone == {"S1": True} and j.rest == {} and j.elsewhere == ()


@pytest.mark.parametrize(
    ("verdict", "levels", "credit"),
    [
        ("supported", {"S1": "full", "S2": "partial"}, {"S1": True, "S2": False}),  # a full one: partial not needed
        ("supported", {"S1": "partial", "S2": "partial"}, {"S1": True, "S2": True}),  # jointly supported
        ("partial", {"S1": "partial", "S2": "none"}, {"S1": False, "S2": False}),  # partial verdict: no credit
        ("supported", {"S1": "full", "S2": "none"}, {"S1": True, "S2": False}),  # none never
    ],
)
def test_liu_credit(verdict: str, levels: dict[str, str], credit: dict[str, bool]) -> None:
    assert liu_credit(verdict, levels) == credit


def llm(verdict: str, **levels: str) -> Assessment:
    return Assessment(
        status="ok", verdict=verdict, citations=tuple({"label": k, "support": v} for k, v in levels.items())
    )


def test_llm_partial_support_from_two_passages() -> None:
    j = judgment_of(llm("supported", S1="partial", S2="partial"), judge="anthropic", version="m")
    assert j.cited and j.faithful and j.alone == {"S1": False, "S2": False} and j.rest == {}
    assert j.credit == {"S1": True, "S2": True} and j.elsewhere == () and j.verdict is None
    assert decide(sentence("S1", "S2"), j).credited == {"S1": True, "S2": True}


def test_llm_full_citation_and_an_extra_one() -> None:
    j = judgment_of(llm("supported", S1="full", S2="partial"), judge="anthropic", version="m")
    assert j.alone == {"S1": True, "S2": False} and j.credit == {"S1": True, "S2": False}
    assert decide(sentence("S1", "S2"), j).credited == {"S1": True, "S2": False}


def test_llm_partial_verdict_keeps_the_elsewhere_it_is_given() -> None:
    j = judgment_of(llm("partial", S1="partial"), judge="anthropic", version="m", elsewhere=("S4",))
    assert not j.cited and j.verdict == PARTIAL and j.elsewhere == ("S4",) and j.faithful
    assert j.credit == {"S1": False} and j.detail["llm"]["verdict"] == "partial"
    assert decide(sentence("S1"), j).verdict == PARTIAL


def test_llm_unverified_is_unjudged() -> None:
    j = judgment_of(Assessment(status="unverified", verdict="supported", reason="quote from S1 not found"),
                    judge="anthropic", version="m")
    assert not j.judged and j.unjudged_reason == "llm unverified: quote from S1 not found"
