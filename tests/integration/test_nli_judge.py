"""The NLI judge on tiny cross-encoders built here and loaded through the real `CrossEncoder` path."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest

from citecheck.core.model import JudgeItem, Passage
from citecheck.core.parsing import split_sentences
from citecheck.judges import Judge, JudgeSpecError, judge_from_spec
from citecheck.judges.cache import InMemoryCache
from citecheck.judges.nli import ModelLoadError, NLIJudge, from_spec
from citecheck.warehouse.judgment_cache import open_cache
from helpers import write_turns_file
from helpers.tiny_models import TINY_MAX_LENGTH, save_permuted, save_tiny_nli

REPO = Path(__file__).resolve().parents[2]

PASSAGES = (
    Passage(
        "S1",
        "Expense reports must be submitted within two weeks. The manager must approve each claim. "
        "Hotel limits apply per day. Receipts are required for every meal.",
    ),
    Passage(
        "S2",
        "Meals are paid by card. The finance team reviews reports each month. "
        "Travel must be approved by a manager.",
    ),
    Passage(
        "S3",
        "Payroll is paid per month. Employees may submit claims on the portal. "
        "A claim is not paid without a receipt. The policy form is on the portal.",
    ),
    Passage("S4", "The hotel limit is per day."),
)
SENTENCES = (
    "Expense reports must be submitted within two weeks.",
    "A manager approves each claim.",
    "Meals are paid by card.",
    "Payroll is paid per month.",
    "Receipts are required.",
    "The hotel limit applies per day.",
    "Claims are submitted on the portal.",
    "The finance team pays travel claims.",
)
CITES = ((), ("S1",), ("S2",), ("S1", "S2"), ("S3", "S4"), ("S1", "S2", "S3"))
LONG_WORDS = ("supercalifragilistic", "antidisestablishment", "floccinaucinihilipil", "pneumonoultramicrosc")
LONG_WORD = LONG_WORDS[0]  # not in the tiny vocabulary: one token per letter


def items_for(turn: str = "t1", context: tuple[Passage, ...] = PASSAGES) -> list[JudgeItem]:
    out = []
    for i, sentence in enumerate(SENTENCES):
        for j, cited in enumerate(CITES):
            out.append(JudgeItem(f"{turn}-{j}", i, sentence, cited, context))
    return out


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nli-models")
    base = save_tiny_nli(root / "tiny")  # neutral, entailment, contradiction
    return {
        "tiny": base,
        # contradiction, neutral, entailment: the same logits in another order
        "permuted": save_permuted(base, root / "permuted", [2, 0, 1]),
        "no_entailment": save_tiny_nli(root / "sentiment", labels=("negative", "positive")),
    }


def make_judge(path: Path, **fields) -> NLIJudge:
    return from_spec({"kind": "nli", "model": str(path), "batch_size": 8, **fields}, progress=False)


def spy_on_model(judge: NLIJudge, monkeypatch) -> list[tuple[str, str]]:
    """Record every pair the judge sends to `CrossEncoder.predict`."""
    sent: list[tuple[str, str]] = []
    model = judge.scorer.model
    original = model.predict

    def predict(pairs, *args, **kwargs):
        sent.extend(tuple(p) for p in pairs)
        return original(pairs, *args, **kwargs)

    monkeypatch.setattr(model, "predict", predict)
    return sent


def windows_of(text: str) -> list[str]:
    sentences = split_sentences(text)
    return sentences + [f"{a} {b}" for a, b in pairwise(sentences)]


def direct_probabilities(model_path: Path, pairs: list[tuple[str, str]]):
    """Probabilities straight from a fresh CrossEncoder: the reference the judge must match."""
    import torch
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(str(model_path))
    return model.predict(pairs, activation_fn=torch.nn.Identity(), apply_softmax=True)


def verdict_fields(j) -> tuple:
    return (j.cited, j.alone, j.rest, j.elsewhere, j.faithful, j.unjudged_reason)


def assert_consistent(item: JudgeItem, judgment, threshold: float) -> None:
    """Every verdict field follows from the judgment's own per-passage scores."""
    scores = judgment.detail["passage_scores"]
    cited = tuple(dict.fromkeys(item.cited))
    assert judgment.judged
    assert judgment.alone == {lab: scores[lab] >= threshold for lab in cited}
    assert judgment.cited == any(judgment.alone.values())
    assert judgment.rest == {lab: any(judgment.alone[o] for o in cited if o != lab) for lab in cited}
    if cited:
        assert judgment.score == pytest.approx(max(scores[lab] for lab in cited))
    else:
        assert judgment.score is None
    if judgment.cited:
        assert judgment.elsewhere == (max(cited, key=scores.__getitem__),)
    else:
        uncited = [p.label for p in item.context if p.label not in cited]
        assert set(uncited) <= set(scores)  # uncited passages were scored: faithfulness needs them
        supporting = [lab for lab in uncited if scores[lab] >= threshold]
        assert judgment.elsewhere == ((max(supporting, key=scores.__getitem__),) if supporting else ())
    assert judgment.faithful == (judgment.cited or bool(judgment.elsewhere))
    pool = cited or tuple(scores)
    contradiction = judgment.detail["passage_contradiction"]
    assert judgment.contradiction == pytest.approx(max(contradiction[p] for p in pool))


def test_loads_through_crossencoder_and_reads_the_label_order(models):
    from sentence_transformers import CrossEncoder

    judge = make_judge(models["tiny"])
    assert isinstance(judge, Judge)
    assert isinstance(judge.scorer.model, CrossEncoder)
    assert (judge.scorer.entail_index, judge.scorer.contra_index) == (1, 2)
    assert judge.scorer.max_length == TINY_MAX_LENGTH
    permuted = make_judge(models["permuted"])
    assert (permuted.scorer.entail_index, permuted.scorer.contra_index) == (2, 0)
    assert judge.version == str(models["tiny"])
    assert judge_from_spec({"kind": "nli", "model": str(models["tiny"])}).name == "nli"


def test_passage_score_is_the_best_window_entailment_from_id2label(models):
    judge = make_judge(models["tiny"], all_passages=True)
    sentence = SENTENCES[1]
    [judgment] = judge.judge([JudgeItem("t", 0, sentence, ("S1",), PASSAGES)])
    for passage in PASSAGES:
        windows = windows_of(passage.text)
        probs = direct_probabilities(models["tiny"], [(w, sentence) for w in windows])
        scores, contradiction = judgment.detail["passage_scores"], judgment.detail["passage_contradiction"]
        assert scores[passage.label] == pytest.approx(float(probs[:, 1].max()), abs=1e-5)
        assert contradiction[passage.label] == pytest.approx(float(probs[:, 2].max()), abs=1e-5)
    # reading index 0 (neutral) instead would give other scores: the label order matters here
    s1 = direct_probabilities(models["tiny"], [(w, sentence) for w in windows_of(PASSAGES[0].text)])
    assert not math.isclose(float(s1[:, 0].max()), judgment.detail["passage_scores"]["S1"], abs_tol=1e-3)


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.95])
def test_verdict_fields_follow_from_the_judges_own_scores(models, threshold):
    items = items_for()
    judgments = make_judge(models["tiny"], threshold=threshold).judge(items)
    assert len(judgments) == len(items)
    for item, judgment in zip(items, judgments, strict=True):
        assert_consistent(item, judgment, threshold)
    outcomes = {outcome(item, j) for item, j in zip(items, judgments, strict=True)}
    assert {"supported", "miscited", "uncited_supported"} <= outcomes, outcomes
    assert "unsupported" in outcomes or threshold < 0.9
    alone = [v for j in judgments for v in j.alone.values()]
    assert any(alone) and not all(alone), "the tiny model should both support and reject"


def outcome(item: JudgeItem, judgment) -> str:
    """The pipeline's verdict rule (SPEC §5), to check the cases occur."""
    if judgment.cited:
        return "supported"
    if judgment.elsewhere:
        return "miscited" if item.cited else "uncited_supported"
    return "unsupported"


def test_a_permuted_label_order_gives_the_same_judgments(models):
    items = items_for()
    first = make_judge(models["tiny"]).judge(items)
    second = make_judge(models["permuted"]).judge(items)
    for a, b in zip(first, second, strict=True):
        assert verdict_fields(a) == verdict_fields(b)
        assert a.score == pytest.approx(b.score, abs=1e-5) if a.score is not None else b.score is None
        assert a.contradiction == pytest.approx(b.contradiction, abs=1e-5)
        assert a.detail["passage_scores"] == pytest.approx(b.detail["passage_scores"], abs=1e-5)


def test_each_distinct_pair_is_scored_once_across_turns(models, monkeypatch):
    judge = make_judge(models["tiny"], threshold=0.0)  # citations support: only cited windows needed
    sent = spy_on_model(judge, monkeypatch)
    one_turn = [JudgeItem("a", 0, SENTENCES[0], ("S1",), PASSAGES)]
    judge.judge(one_turn)
    single = len(sent)
    fresh = make_judge(models["tiny"], threshold=0.0)
    sent_fresh = spy_on_model(fresh, monkeypatch)
    # the same sentence and passage in three turns, with the passage under different labels
    relabelled = (Passage("X9", PASSAGES[0].text), *PASSAGES[1:])
    fresh.judge(
        [
            JudgeItem("a", 0, SENTENCES[0], ("S1",), PASSAGES),
            JudgeItem("b", 3, SENTENCES[0], ("S1",), PASSAGES),
            JudgeItem("c", 1, "  Expense reports must be  submitted within two weeks. ", ("X9",), relabelled),
        ]
    )
    assert len(sent_fresh) == len(set(sent_fresh)) == single == len(windows_of(PASSAGES[0].text))
    assert fresh.stats()["pairs_needed"] == fresh.stats()["pairs_scored"] == single


def test_rerunning_an_unchanged_input_scores_zero_pairs(models, monkeypatch):
    judge = make_judge(models["tiny"])
    items = items_for()
    first = judge.judge(items)
    scored = judge.stats()["pairs_scored"]
    assert scored > 0
    sent = spy_on_model(judge, monkeypatch)
    again = judge.judge(items)
    stats = judge.stats()
    assert sent == [] and stats["pairs_scored"] == scored
    assert stats["cache_hits"] == stats["pairs_needed"] - scored
    assert again == first


def test_the_sqlite_cache_keeps_scores_between_runs(models, tmp_path, monkeypatch):
    path = tmp_path / "cache.sqlite"
    items = items_for()
    first = from_spec({"kind": "nli", "model": str(models["tiny"])}, cache=open_cache(path), progress=False)
    before = first.judge(items)
    assert first.stats()["cache"].startswith("sqlite:///")
    second = from_spec({"kind": "nli", "model": str(models["tiny"])}, cache=open_cache(path), progress=False)
    sent = spy_on_model(second, monkeypatch)
    after = second.judge(items)
    assert sent == [] and second.stats()["pairs_scored"] == 0
    assert second.stats()["cache_hits"] == first.stats()["pairs_scored"]
    for a, b in zip(before, after, strict=True):
        assert verdict_fields(a) == verdict_fields(b)
        assert a.detail["passage_scores"] == pytest.approx(b.detail["passage_scores"], rel=1e-12)


def test_cached_probabilities_serve_another_threshold(models, monkeypatch):
    cache = InMemoryCache()
    items = items_for()
    from_spec({"kind": "nli", "model": str(models["tiny"]), "all_passages": True}, cache=cache).judge(items)
    strict = from_spec({"kind": "nli", "model": str(models["tiny"]), "threshold": 0.8}, cache=cache)
    sent = spy_on_model(strict, monkeypatch)
    for item, judgment in zip(items, strict.judge(items), strict=True):
        assert_consistent(item, judgment, 0.8)
    assert sent == [] and strict.stats()["pairs_scored"] == 0


def test_uncited_passages_are_scored_only_when_the_citations_fail(models, monkeypatch):
    cited_texts = set(windows_of(PASSAGES[0].text))
    judge = make_judge(models["tiny"], threshold=0.0)  # every cited passage supports
    sent = spy_on_model(judge, monkeypatch)
    [j] = judge.judge([JudgeItem("t", 0, SENTENCES[2], ("S1",), PASSAGES)])
    assert {w for w, _ in sent} == cited_texts
    assert j.cited and j.faithful and j.elsewhere == ("S1",)
    assert set(j.detail["passage_scores"]) == {"S1"}
    every = make_judge(models["tiny"], threshold=0.0, all_passages=True)
    sent_all = spy_on_model(every, monkeypatch)
    every.judge([JudgeItem("t", 0, SENTENCES[2], ("S1",), PASSAGES)])
    assert {w for w, _ in sent_all} == {w for p in PASSAGES for w in windows_of(p.text)}
    uncited = make_judge(models["tiny"], threshold=0.0)
    sent_uncited = spy_on_model(uncited, monkeypatch)
    [u] = uncited.judge([JudgeItem("t", 0, SENTENCES[2], (), PASSAGES)])
    assert {w for w, _ in sent_uncited} == {w for p in PASSAGES for w in windows_of(p.text)}
    assert not u.cited and u.faithful and u.score is None


def test_over_long_windows_are_split_never_truncated_or_sent_whole(models, monkeypatch):
    long_sentence = " ".join(LONG_WORDS) + "."  # about 80 tokens: longer than the model
    medium_a = "The manager must approve each claim within two weeks."  # 15 tokens
    medium_b = "Receipts for every meal are paid by the finance team."  # 15 tokens
    passage = Passage("L1", f"{medium_a} {medium_b} {long_sentence} Payroll is paid per month.")
    judge = make_judge(models["tiny"], max_length=40)
    sent = spy_on_model(judge, monkeypatch)
    sentence = "Receipts are required."  # 11 tokens: 40 - 3 special - 11 leaves 26 for a premise
    [j] = judge.judge([JudgeItem("t", 0, sentence, ("L1",), (passage,))])
    tokenizer = judge.scorer.tokenizer
    assert j.judged
    assert sent, "something was scored"
    for premise, hypothesis in sent:
        assert hypothesis == sentence
        assert len(tokenizer(premise, hypothesis)["input_ids"]) <= 40, "a pair the model would truncate"
        assert premise != normalise(passage.text) and premise in normalise(passage.text)
    premises = {p for p, _ in sent}
    assert f"{medium_a} {medium_b}" not in premises  # the over-long two-sentence window was split …
    assert {medium_a, medium_b, "Payroll is paid per month."} <= premises  # … into its one-sentence windows
    chunks = [p for p in premises if p in long_sentence]
    assert len(chunks) >= 4 and long_sentence not in premises
    covered = set()
    for chunk in chunks:  # overlapping token chunks that together cover the whole sentence
        start = long_sentence.index(chunk)
        covered.update(range(start, start + len(chunk)))
    assert {i for i, c in enumerate(long_sentence) if c != " "} <= covered
    # the long sentence, the two windows that contain it, and medium_a + medium_b
    assert judge.stats()["splits"] == 4


def test_the_whole_passage_is_never_one_premise_at_the_models_max_length(models, monkeypatch):
    text = " ".join(p.text for p in PASSAGES[:3])
    judge = make_judge(models["tiny"])
    sent = spy_on_model(judge, monkeypatch)
    judge.judge([JudgeItem("t", 0, SENTENCES[0], ("P",), (Passage("P", text),))])
    tokenizer = judge.scorer.tokenizer
    assert len(tokenizer(text, SENTENCES[0])["input_ids"]) > TINY_MAX_LENGTH
    assert all(len(tokenizer(p, h)["input_ids"]) <= TINY_MAX_LENGTH for p, h in sent)
    assert max(len(split_sentences(p)) for p, _ in sent) <= 2
    assert set(windows_of(text)) >= {p for p, _ in sent}


def test_windows_never_join_two_passages(models, monkeypatch):
    judge = make_judge(models["tiny"], all_passages=True)
    sent = spy_on_model(judge, monkeypatch)
    judge.judge(items_for())
    texts = [normalise(p.text) for p in PASSAGES]
    assert all(any(premise in t for t in texts) for premise, _ in sent)


def test_a_sentence_longer_than_the_model_is_unjudged_not_truncated(models):
    judge = make_judge(models["tiny"])
    long_claim = " ".join([LONG_WORD] * 3) + "."
    short, long = judge.judge(
        [JudgeItem("t", 0, SENTENCES[0], ("S1",), PASSAGES), JudgeItem("t", 1, long_claim, ("S1",), PASSAGES)]
    )
    assert short.judged
    assert not long.judged and "max length" in long.unjudged_reason
    assert judge.stats()["unjudged"] == 1


def test_a_failing_batch_is_halved_and_a_failing_pair_leaves_its_sentence_unjudged(models):
    judge = make_judge(models["tiny"], batch_size=16)
    real = judge.scorer.probabilities
    poisoned = SENTENCES[3]

    def flaky(pairs):
        if len(pairs) > 4:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        if any(h == poisoned for _, h in pairs):
            raise RuntimeError("CUDA out of memory (even alone)")
        return real(pairs)

    judge.scorer.probabilities = flaky
    items = [JudgeItem("t", i, s, ("S1", "S3"), PASSAGES) for i, s in enumerate(SENTENCES)]
    judgments = judge.judge(items)
    stats = judge.stats()
    assert stats["batch_retries"] > 0 and stats["pairs_failed"] > 0
    for item, judgment in zip(items, judgments, strict=True):
        if item.sentence == poisoned:
            assert not judgment.judged and "out of memory" in judgment.unjudged_reason
        else:
            assert_consistent(item, judgment, 0.5)
    assert stats["unjudged"] == 1
    assert stats["pairs_needed"] == stats["pairs_scored"] + stats["pairs_failed"] + stats["cache_hits"]


def test_stats_report_the_issue_counters(models):
    judge = make_judge(models["tiny"])
    judge.judge(items_for())
    stats = judge.stats()
    required = (
        "pairs_needed pairs_scored cache_hits tokens padding_share splits pairs_per_second model revision"
    )
    assert set(required.split()) <= set(stats)
    assert stats["pairs_needed"] == stats["pairs_scored"] + stats["cache_hits"] + stats["pairs_failed"]
    assert 0 < stats["tokens"] <= stats["padded_tokens"]
    assert 0.0 <= stats["padding_share"] < 0.5
    assert stats["pairs_per_second"] > 0
    json.dumps(stats)


def test_int8_quantization_is_a_separate_cached_model(models, monkeypatch):
    cache = InMemoryCache()
    items = items_for()[:12]
    fp32 = from_spec({"kind": "nli", "model": str(models["tiny"])}, cache=cache)
    fp32.judge(items)
    int8 = from_spec({"kind": "nli", "model": str(models["tiny"]), "quantize": "int8"}, cache=cache)
    sent = spy_on_model(int8, monkeypatch)
    judgments = int8.judge(items)
    assert int8.version.endswith("+int8")
    assert len(sent) == int8.stats()["pairs_scored"] == fp32.stats()["pairs_scored"]  # no fp32 reuse
    for item, judgment in zip(items, judgments, strict=True):
        assert_consistent(item, judgment, 0.5)


@pytest.mark.parametrize(
    "fields",
    [
        {"colour": "blue"},
        {"threshold": 1.5},
        {"threshold": "0.5"},
        {"threshold": True},
        {"batch_size": 0},
        {"batch_size": 2.5},
        {"batch_size": True},
        {"max_length": -1},
        {"quantize": "int4"},
        {"device": 3},
        {"model": ""},
        {"model": 7},
        {"revision": ""},
        {"all_passages": "yes"},
    ],
)
def test_invalid_judge_file_fields_are_rejected_before_loading(fields):
    with pytest.raises(JudgeSpecError):
        judge_from_spec({"kind": "nli", "model": "/nowhere/at/all", **fields})


def test_a_missing_model_path_says_what_to_set(tmp_path):
    with pytest.raises(ModelLoadError) as err:
        judge_from_spec({"kind": "nli", "model": str(tmp_path / "no-such-model")})
    message = str(err.value)
    assert "no such directory" in message and '"model"' in message
    assert "huggingface-cli download" in message and "HF_HUB_OFFLINE=1" in message


def test_an_uncached_hub_model_offline_says_how_to_pre_download(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError) as err:
        judge_from_spec({"kind": "nli", "model": "citecheck-tests/no-such-nli-model", "revision": "abc123"})
    message = str(err.value)
    assert "huggingface-cli download citecheck-tests/no-such-nli-model --revision abc123" in message
    assert "never falls back" in message


def test_a_model_without_an_entailment_label_fails_at_load_time(models):
    with pytest.raises(ModelLoadError, match="entailment"):
        make_judge(models["no_entailment"])


def test_max_length_beyond_the_model_is_an_error(models):
    with pytest.raises(ModelLoadError, match="exceeds"):
        make_judge(models["tiny"], max_length=TINY_MAX_LENGTH + 1)


def test_the_cli_scores_with_an_nli_judge_file_and_reuses_its_cache(models, tmp_path):
    answer = "Expense reports must be submitted within two weeks. [S1] Meals are paid by card. [S2]"
    turns = write_turns_file(tmp_path / "turns.jsonl", "cli-1", answer, PASSAGES)
    judge_file = tmp_path / "judge.json"
    judge_file.write_text(json.dumps({"kind": "nli", "model": str(models["tiny"]), "batch_size": 8}))
    cache = tmp_path / "cache.sqlite"

    def run() -> dict:
        out = tmp_path / "out.json"
        args = ["score", "--turns", turns, "--judge", judge_file, "--cache", cache, "--out", out]
        cmd = [sys.executable, "-m", "citecheck", *map(str, args)]
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 1), proc.stderr
        return json.loads(out.read_text(encoding="utf-8"))

    first = run()["stats"]
    assert first["pairs_scored"] > 0 and first["pairs_needed"] >= first["pairs_scored"]
    second = run()["stats"]
    assert second["pairs_scored"] == 0 and second["cache_hits"] == second["pairs_needed"] > 0


def normalise(text: str) -> str:
    return " ".join(text.split())
