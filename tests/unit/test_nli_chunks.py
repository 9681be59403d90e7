"""Chunked premises (`"premise": "chunks"`, SPEC §4) on tiny cross-encoders built here and loaded
through the real `CrossEncoder` path, for torch and ONNX Runtime: packing, joint chunks over a cited
set, the one derivation, cache separation by mode and `chunk_tokens`."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import pytest

from citecheck.core.model import JudgeItem, Passage
from citecheck.core.parsing import split_sentences
from citecheck.core.text import find_span
from citecheck.judges import JudgeSpecError, judge_from_spec
from citecheck.judges.cache import InMemoryCache
from citecheck.judges.derive import derive_judgment
from citecheck.judges.nli import CrossEncoderScorer, NLIJudge, from_spec, parse_spec
from helpers.tiny_models import TINY_MAX_LENGTH, save_tiny_nli

S1 = (
    "Expense reports must be submitted within two weeks. The manager must approve each claim. "
    "Hotel limits apply per day. Receipts are required for every meal. Travel claims are paid per month."
)
S2 = "Meals are paid by card. The finance team reviews reports each month."
S3 = "Payroll is paid per month. Employees may submit claims on the portal. The policy form is on the portal."
S4 = "The hotel limit is per day."
PASSAGES = (Passage("S1", S1), Passage("S2", S2), Passage("S3", S3), Passage("S4", S4))
CLAIM = "A manager approves each claim."
LONG_WORD = "supercalifragilistic"  # not in the tiny vocabulary: one token per letter


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return save_tiny_nli(tmp_path_factory.mktemp("nli-chunk-models") / "tiny", max_length=TINY_MAX_LENGTH)


@pytest.fixture(scope="module")
def wide(tmp_path_factory) -> Path:
    """Room for whole passages: max length 512."""
    return save_tiny_nli(tmp_path_factory.mktemp("nli-chunk-models") / "wide", max_length=512)


@pytest.fixture(scope="module", params=["torch", "onnx"])
def backend_model(request, tiny, tmp_path_factory) -> tuple[str, Path]:
    """The tiny model on each backend (ONNX exports beside its own copy)."""
    if request.param == "torch":
        return "torch", tiny
    copy = Path(shutil.copytree(tiny, tmp_path_factory.mktemp("nli-chunk-onnx") / "model"))
    return "onnx", copy


def chunk_judge(path: Path, **fields) -> NLIJudge:
    cache = fields.pop("cache", None)
    spec = {"kind": "nli", "model": str(path), "batch_size": 8, "premise": "chunks", **fields}
    return from_spec(spec, progress=False, cache=cache)


def spy(judge: NLIJudge) -> list[tuple[str, str]]:
    """Every pair the judge sends to its scorer."""
    sent: list[tuple[str, str]] = []
    real = judge.scorer.probabilities

    def record(pairs):
        sent.extend(tuple(p) for p in pairs)
        return real(pairs)

    judge.scorer.probabilities = record  # type: ignore[method-assign]
    return sent


def pair_tokens(judge: NLIJudge, premise: str, claim: str) -> int:
    """The pair's length as the model sees it, special tokens included."""
    return len(judge.scorer.tokenizer(premise, claim)["input_ids"])


def sentences_of(text: str) -> list[str]:
    return [" ".join(s.split()) for s in split_sentences(text)]


def test_a_passage_is_packed_in_order_within_the_token_budget(backend_model):
    backend, path = backend_model
    judge = chunk_judge(path, backend=backend, chunk_tokens=40)
    sent = spy(judge)
    judge.judge([JudgeItem("t", 0, CLAIM, ("S1",), PASSAGES)])
    room = 40 - judge.scorer.special_tokens - judge.scorer.token_lengths([CLAIM])[0]
    packed, split = judge.premises.premises((S1,), room)
    chunks = [chunk for chunk, _ in packed]
    assert sorted(premise for premise, _ in sent) == sorted(chunks)  # what was sent (length-sorted)
    assert not split and len(chunks) > 1, "S1 does not fit one 40-token chunk"
    assert [n for _, n in packed] == judge.scorer.token_lengths(chunks)
    assert all(pair_tokens(judge, chunk, CLAIM) <= 40 for chunk in chunks)
    # in order, every sentence once, nothing cut
    assert " ".join(chunks) == " ".join(sentences_of(S1))
    # greedy: a chunk ends where the next sentence would not fit
    for chunk, following in pairwise(chunks):
        next_sentence = sentences_of(following)[0]
        assert judge.scorer.token_lengths([f"{chunk} {next_sentence}"])[0] > room
    assert judge.stats()["splits"] == 0
    assert judge.version.endswith(("" if backend == "torch" else "+onnx") + "+chunks40")


def test_chunks_never_pass_the_models_max_length(tiny):
    judge = chunk_judge(tiny)  # chunk_tokens 400 on a 64-token model: the model's limit wins
    sent = spy(judge)
    judge.judge([JudgeItem("t", 0, CLAIM, ("S1", "S3"), PASSAGES)])
    assert sent and all(pair_tokens(judge, premise, claim) <= TINY_MAX_LENGTH for premise, claim in sent)
    assert judge.premises.budget == TINY_MAX_LENGTH


def test_a_sentence_longer_than_a_chunk_is_split_and_counted(backend_model):
    backend, path = backend_model
    long_sentence = " ".join([LONG_WORD] * 4) + "."  # about 80 letter tokens
    passage = Passage("L", f"The manager must approve each claim. {long_sentence} Receipts are required.")
    judge = chunk_judge(path, backend=backend, chunk_tokens=48)
    sent = spy(judge)
    [judgment] = judge.judge([JudgeItem("t", 0, CLAIM, ("L",), (passage,))])
    assert judgment.judged
    premises = [premise for premise, _ in sent]
    assert all(pair_tokens(judge, premise, CLAIM) <= 48 for premise in premises)
    assert all(long_sentence not in premise for premise in premises)  # never sent whole
    assert sum(LONG_WORD[:8] in premise for premise in premises) >= 2  # its pieces are
    assert judge.stats()["splits"] == 1
    assert "The manager must approve each claim." in premises  # the sentences around it stay whole


def test_a_cited_set_is_packed_jointly_in_citation_order(wide):
    judge = chunk_judge(wide)
    sent = spy(judge)
    judge.judge([JudgeItem("a", 0, CLAIM, ("S2", "S4"), PASSAGES), JudgeItem("b", 0, CLAIM, ("S4", "S2"), PASSAGES)])
    premises = {premise for premise, _ in sent}
    s2, s4 = " ".join(sentences_of(S2)), " ".join(sentences_of(S4))
    assert {s2, s4, f"{s2} {s4}", f"{s4} {s2}"} <= premises  # alone, and the set in each citation order
    windows = from_spec({"kind": "nli", "model": str(wide), "batch_size": 8}, progress=False)
    window_pairs = spy(windows)
    windows.judge([JudgeItem("a", 0, CLAIM, ("S2", "S4"), PASSAGES)])
    assert not any(s2 in premise and s4 in premise for premise, _ in window_pairs)  # windows never join


def test_three_citations_score_the_set_and_each_rest_set(wide):
    judge = chunk_judge(wide)
    sent = spy(judge)
    [judgment] = judge.judge([JudgeItem("t", 0, CLAIM, ("S2", "S3", "S4"), PASSAGES)])
    text = {lab: " ".join(sentences_of(p.text)) for lab, p in ((p.label, p) for p in PASSAGES)}
    premises = {premise for premise, _ in sent}
    for labels in (("S2", "S3", "S4"), ("S3", "S4"), ("S2", "S4"), ("S2", "S3")):
        assert " ".join(text[lab] for lab in labels) in premises
    assert set(judgment.detail["set_scores"]) == {"S2+S3+S4", "S3+S4", "S2+S4", "S2+S3"}
    assert len(sent) == len(set(sent))  # every distinct pair once


# -- the one derivation, on a recorded-score oracle --------------------------------------------

EVIDENCE = {
    "Expense reports must be submitted within two weeks.": ("Expense reports must be submitted within two weeks.",),
    "A manager approves each claim.": ("The manager must approve each claim.",),
    "Meals are paid by card.": ("Meals are paid by card.",),
    "Payroll is paid per month.": ("Payroll is paid per month.",),
    "The hotel limit applies per day.": ("The hotel limit is per day.",),
    "Claims are submitted on the portal.": ("Employees may submit claims on the portal.",),
    "The finance team pays travel claims.": ("The finance team reviews reports each month.", "Travel claims are paid"),
    "Receipts are required for card meals.": ("Receipts are required for every meal.", "Meals are paid by card."),
    "Nothing here is supported.": ("no passage says this",),
}
"""Sentence → the texts a premise must hold, all of them, to entail it (two: support needs two passages)."""
CITES = ((), ("S1",), ("S2",), ("S1", "S2"), ("S2", "S1"), ("S3", "S4"), ("S1", "S2", "S3"), ("S9", "S2"))


class RecordedScorer(CrossEncoderScorer):
    """The real loaded scorer with its probabilities recorded: a premise entails a sentence iff it
    holds every text `EVIDENCE` lists for it."""

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[tuple[float, ...]]:
        out = []
        for premise, sentence in pairs:
            entails = all(text in premise for text in EVIDENCE[sentence])
            probs = [0.05] * len(self.labels)
            probs[self.entail_index] = 0.9 if entails else 0.05
            if self.contra_index is not None and not entails:
                probs[self.contra_index] = 0.9
            out.append(tuple(probs))
        return out


def oracle_judge(path: Path, **fields) -> NLIJudge:
    settings = parse_spec({"kind": "nli", "model": str(path), "batch_size": 8, **fields})
    loaded = from_spec({"kind": "nli", "model": str(path)}, progress=False).scorer
    loaded.__class__ = RecordedScorer
    return NLIJudge(loaded, settings, progress=False)


def oracle_items() -> list[JudgeItem]:
    return [
        JudgeItem(f"t{j}", i, sentence, cited, PASSAGES)
        for i, sentence in enumerate(EVIDENCE)
        for j, cited in enumerate(CITES)
    ]


def fields(j) -> tuple:
    return (j.cited, j.alone, j.rest, j.elsewhere, j.faithful)


def expected(item: JudgeItem, *, joint: bool) -> tuple:
    """What `derive_judgment` gives from the set answers the oracle implies: a set supports when one
    passage holds all the evidence, or (chunks) when the set's passages together do."""
    text = {p.label: " ".join(sentences_of(p.text)) for p in item.context}

    def supports(labels: frozenset[str]) -> bool:
        known = [lab for lab in dict.fromkeys(item.cited) if lab in labels and lab in text]
        known += [lab for lab in text if lab in labels and lab not in known]
        if any(all(e in text[lab] for e in EVIDENCE[item.sentence]) for lab in known):
            return True
        return joint and all(e in " ".join(text[lab] for lab in known) for e in EVIDENCE[item.sentence])

    cited = tuple(dict.fromkeys(item.cited))
    order = [*cited, *(lab for lab in text if lab not in cited)]  # the oracle ties: citation, then context order
    j = derive_judgment(cited, supports, judge="x", judge_version="x", prefer=order)
    return fields(j)


def test_chunks_and_windows_derive_the_same_judgment_from_the_same_set_answers(wide):
    items = oracle_items()
    windows = oracle_judge(wide).judge(items)
    chunks = oracle_judge(wide, premise="chunks").judge(items)
    for item, w, c in zip(items, windows, chunks, strict=True):
        assert fields(w) == expected(item, joint=False), item
        assert fields(c) == expected(item, joint=True), item
        single = len(EVIDENCE[item.sentence]) == 1
        if single:  # support inside one passage: the two modes agree
            assert fields(c) == fields(w), item


def test_joint_support_is_visible_to_chunks_and_not_to_windows(wide):
    item = JudgeItem("t", 0, "The finance team pays travel claims.", ("S1", "S2"), PASSAGES)
    [w] = oracle_judge(wide).judge([item])
    [c] = oracle_judge(wide, premise="chunks").judge([item])
    assert not w.cited and w.alone == {"S1": False, "S2": False}
    assert c.cited and c.alone == {"S1": False, "S2": False} and c.rest == {"S1": False, "S2": False}
    assert c.score == pytest.approx(0.9) and c.detail["set_scores"] == {"S1+S2": pytest.approx(0.9)}


def test_the_best_chunk_lies_inside_its_passage_so_the_report_can_highlight_it(wide):
    [judgment] = oracle_judge(wide, premise="chunks").judge([JudgeItem("t", 0, CLAIM, ("S1", "S3"), PASSAGES)])
    for label, chunk in judgment.detail["best_windows"].items():
        passage = next(p for p in PASSAGES if p.label == label)
        assert find_span(passage.text, chunk) is not None
    assert judgment.alone == {"S1": True, "S3": False}


def test_the_report_highlights_the_best_chunk_and_calls_it_one(wide):
    from citecheck.report.data import evidence_for

    judge = oracle_judge(wide, premise="chunks")
    [judgment] = judge.judge([JudgeItem("t", 0, CLAIM, ("S1", "S3"), PASSAGES)])
    row = {"labels": ["S1", "S3"], "judge_version": judgment.judge_version,
           "best_windows": judgment.detail["best_windows"]}
    shown = evidence_for(row, {p.label: {"text": p.text} for p in PASSAGES})
    assert [(e.label, e.span_kind) for e in shown] == [("S1", "NLI best chunk"), ("S3", "NLI best chunk")]
    highlighted = "".join(piece for piece, marked in shown[0].segments if marked)
    assert " ".join(highlighted.split()) == judgment.detail["best_windows"]["S1"]


# -- the cache never mixes modes ---------------------------------------------------------------


def test_the_cache_keeps_windows_and_each_chunk_size_apart(wide):
    cache = InMemoryCache()
    items = [JudgeItem("t", i, s, c, PASSAGES) for i, s in enumerate(list(EVIDENCE)[:4]) for c in CITES[:4]]
    windows = from_spec({"kind": "nli", "model": str(wide), "batch_size": 8}, cache=cache, progress=False)
    windows.judge(items)
    big = chunk_judge(wide, cache=cache)
    big_sent = spy(big)
    big.judge(items)
    small = chunk_judge(wide, cache=cache, chunk_tokens=32)
    small.judge(items)
    again = chunk_judge(wide, cache=cache)
    again_sent = spy(again)
    again.judge(items)
    s4 = " ".join(sentences_of(S4))  # a one-sentence passage: its window and its chunk are the same text
    assert any(premise == s4 for premise, _ in big_sent), "chunks re-scored what windows had cached"
    assert big.stats()["cache_hits"] == 0 and small.stats()["cache_hits"] == 0
    assert not again_sent and again.stats()["cache_hits"] == again.stats()["pairs_needed"] > 0
    versions = {windows.version, big.version, small.version}
    assert len(versions) == 3 and big.version.endswith("+chunks400") and small.version.endswith("+chunks32")
    assert "chunks" not in windows.version
    assert big.stats()["premise"] == "chunks" and big.stats()["chunk_tokens"] == 400
    assert windows.stats()["premise"] == "windows"


@pytest.mark.parametrize(
    "fields",
    [
        {"premise": "paragraphs"},
        {"premise": "windows", "chunk_tokens": 400},
        {"chunk_tokens": 400},
        {"premise": "chunks", "chunk_tokens": 0},
        {"premise": "chunks", "chunk_tokens": 8},
        {"premise": "chunks", "chunk_tokens": "400"},
        {"support_label": True},
        {"support_label": -1},
        {"support_label": ""},
        {"support_label": 1.0},
    ],
)
def test_invalid_premise_fields_are_rejected_before_loading(fields):
    with pytest.raises(JudgeSpecError):
        judge_from_spec({"kind": "nli", "model": "/nowhere/at/all", **fields})


def test_windows_stay_the_default():
    settings = parse_spec({"kind": "nli"})
    assert settings.premise == "windows" and settings.premise_tag == ""
    assert parse_spec({"kind": "nli", "premise": "chunks"}).chunk_tokens == 400
