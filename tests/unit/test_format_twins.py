"""Every native format and its marker twin (SPEC §3.4): the same answer and citations written with
markers and in a provider's format give the same sentences, labels, verdicts and day metrics, with
non-ASCII text (€, ü, 東京, emoji) before every span so an offset read in the wrong unit lands
elsewhere; injected pointer problems are counted exactly, by kind."""

from __future__ import annotations

import copy

import pytest

from citecheck.core.formats import POINTER_PROBLEM_KINDS
from citecheck.demo.formats import ANTHROPIC_KINDS, Claim, Source, markers_twin, native_turn
from helpers import score_dicts

SOURCES = [
    Source("Reiserichtlinie § Hotel", "https://policy.example/hotel",
           ("Hotels in 東京 and München are capped at €220 a night.", "Über the cap you need approval 📝.")),
    Source("Reiserichtlinie § Essen", "https://policy.example/meals",
           ("Dinner is paid up to €40 🍽️.", "Alcohol is never reimbursed.")),
    Source("FAQ § Zahlung", "https://policy.example/pay", ("Reports are paid with the monthly payroll 💶.",)),
]
SUPPORT = {  # statement (as the judge sees it) -> source indices that support it alone
    "Hotels in 東京 cost at most €220 a night 🏨.": [0],
    "Über the cap, approval 📝 is needed.": [0],
    "Dinner is paid up to €40 and alcohol never.": [1],
    "Reports are paid with the payroll 💶 within 5 days.": [],
    "Ask me if you need the form.": [],
    "Müller's hotel in 東京 at €200 and his dinner at €35 are both fine.": [],
}


def _claims(after_stop: bool) -> list[list[Claim]]:
    return [
        [Claim("Hotels in 東京 cost at most €220 a night 🏨", (0,), after_stop=after_stop),
         Claim("Über the cap, approval 📝 is needed", (0,), quotes={0: 1}, after_stop=after_stop),
         Claim("Dinner is paid up to €40 and alcohol never", (1,), after_stop=after_stop),
         Claim("Ask me if you need the form", ())],
        [Claim("Reports are paid with the payroll 💶 within 5 days", (2,), after_stop=after_stop),
         Claim("Müller's hotel in 東京 at €200 and his dinner at €35 are both fine", (0, 1), after_stop=after_stop),
         Claim("Dinner is paid up to €40 and alcohol never", (0,), after_stop=after_stop)],
    ]


def _judge(prefix: str) -> dict:
    return {"kind": "recorded", "judgments": [{"statement": s, "supported_by": [f"{prefix}{i}" for i in v]}
                                              for s, v in SUPPORT.items()]}


# (format, writer options, label prefix, citations written after the stop: position-only ones)
VARIANTS = [*(("anthropic_blocks", {"kind": k}, {"search": "R", "web": "W"}.get(k, "D"), False)
              for k in ANTHROPIC_KINDS),
            ("openai_responses", {}, "D", False), ("openai_responses", {"parts": 2}, "D", False),
            ("openai_responses", {"parts": 2}, "D", True),  # web search's markdown links after the stop
            ("openai_responses", {"files": True}, "D", True), ("openai_responses", {"files": True}, "D", False),
            ("openai_chat", {}, "D", False), ("openai_chat", {}, "D", True),
            ("cohere_v2", {}, "D", False), ("gemini", {}, "D", False), ("gemini", {"parts": 2}, "D", False),
            ("gemini", {"web": True}, "D", False)]
IDS = [f"{f}-{'-'.join(f'{k}={v}' for k, v in o.items())}-{'after' if a else 'before'}" for f, o, _, a in VARIANTS]
SPAN_ONLY = ("cited_char_share", "unverified_citation_share")  # metrics markers do not have


def _day(answer_format: str, options: dict, after_stop: bool, *, twin: bool, prefix: str = "D") -> list[dict]:
    turns = []
    for n, claims in enumerate(_claims(after_stop)):
        body = markers_twin(claims, SOURCES, prefix) if twin else native_turn(answer_format, claims, SOURCES, **options)
        turns.append({"turn_id": f"t{n}", "conversation_id": f"c{n}", "turn_index": 0,
                      "answered_at": "2026-11-30T09:00:00Z", "question": "Was zahlt die Firma?",
                      "attributes": {"locale": "de"}, **body})
    return turns


def _sentences(out: dict) -> list:
    return [[(s["text"], s["labels"], s["unknown_labels"], s["attached"], s["verdict"], s.get("credited"))
             for s in t["sentences"]] for t in out["turns"]]


def _rows(out: dict) -> dict:
    return {(r["slice_name"], r["slice_value"], r["metric"], r["averaging"]): (r["numerator"], r["denominator"])
            for r in out["rows"] if r["metric"] not in SPAN_ONLY}


@pytest.mark.parametrize(("answer_format", "options", "prefix", "after_stop"), VARIANTS, ids=IDS)
def test_native_turns_score_exactly_as_their_marker_twins(answer_format, options, prefix, after_stop):
    judge = _judge(prefix)
    native = score_dicts(_day(answer_format, options, after_stop, twin=False), judge)
    twin = score_dicts(_day(answer_format, options, after_stop, twin=True, prefix=prefix), judge)
    assert native["skipped"] == [] and all(not t["pointer_problems"] for t in native["turns"])
    assert _sentences(native) == _sentences(twin)
    assert _rows(native) == _rows(twin)
    assert native["counts"]["citations"] == twin["counts"]["citations"] == 7
    if options.get("files"):  # positions only: no answer character is inside a span
        assert native["metrics"]["micro"]["cited_char_share"] == 0.0
    elif not after_stop:
        assert 0.5 < native["metrics"]["micro"]["cited_char_share"] < 1
    assert twin["metrics"]["micro"]["cited_char_share"] is None


def _mutations():
    """(format, options, mutate(day), kind): one injected pointer problem per case."""
    def anthropic(kind, change):
        return ("anthropic_blocks", {"kind": kind}, change)

    def first_citation(day):
        return next(c for b in day[0]["answer_blocks"] for c in b.get("citations", []))

    def annotation(day):
        return day[0]["response"]["output"][0]["content"][0]["annotations"][0]

    def support(day):
        return day[0]["response"]["groundingMetadata"]["groundingSupports"][0]

    yield anthropic("char", lambda d: first_citation(d).update(document_index=9)), "index_out_of_range"
    yield anthropic("char", lambda d: first_citation(d).update(document_title="Old policy")), "title_mismatch"
    yield anthropic("char", lambda d: first_citation(d).update(end_char_index=999)), "offsets_out_of_range"
    yield anthropic("char", lambda d: first_citation(d).update(start_char_index=1)), "cited_text_mismatch"
    yield anthropic("page", lambda d: first_citation(d).update(start_page_number=0)), "offsets_out_of_range"
    yield anthropic("page", lambda d: first_citation(d).update(start_page_number=2, end_page_number=3)), \
        "cited_text_mismatch"
    yield anthropic("block", lambda d: first_citation(d).update(end_block_index=5)), "offsets_out_of_range"
    yield anthropic("search", lambda d: first_citation(d).update(search_result_index=3)), "index_out_of_range"
    yield anthropic("search", lambda d: first_citation(d).update(source="https://elsewhere.example")), \
        "title_mismatch"
    yield anthropic("web", lambda d: first_citation(d).update(url="https://unlogged.example")), "unknown_source"
    yield anthropic("web", lambda d: first_citation(d).update(cited_text="Hotels are free.")), "cited_text_mismatch"
    yield anthropic("char", lambda d: first_citation(d).update(type="pdf_location")), "malformed"
    yield ("openai_responses", {}, lambda d: annotation(d).update(url="https://unlogged.example")), "unknown_source"
    yield ("openai_responses", {}, lambda d: annotation(d).update(start_index=-3)), "offsets_out_of_range"
    yield ("openai_responses", {"files": True}, lambda d: annotation(d).update(file_id="file-x")), "unknown_source"
    yield ("openai_responses", {"files": True}, lambda d: annotation(d).update(index="7")), "malformed"
    yield ("openai_chat", {}, lambda d: d[0]["response"]["annotations"][0]["url_citation"].update(end_index=10 ** 6)), \
        "offsets_out_of_range"
    yield ("cohere_v2", {}, lambda d: d[0]["response"]["citations"][0].update(start=1)), "answer_text_mismatch"
    yield ("cohere_v2", {}, lambda d: d[0]["response"]["citations"][0]["sources"][0].update(id="doc-7")), \
        "unknown_source"
    yield ("cohere_v2", {}, lambda d: d[0]["response"]["citations"][0].update(end=10 ** 6)), "offsets_out_of_range"
    yield ("gemini", {}, lambda d: support(d)["segment"].update(startIndex=11)), "split_character"  # inside 東
    yield ("gemini", {}, lambda d: support(d)["segment"].update(partIndex=4)), "part_out_of_range"
    yield ("gemini", {}, lambda d: support(d).update(groundingChunkIndices=[5])), "index_out_of_range"
    yield ("gemini", {}, lambda d: support(d)["segment"].update(endIndex=10 ** 6)), "offsets_out_of_range"
    yield ("gemini", {}, lambda d: support(d)["segment"].update(text="Hotels")), "answer_text_mismatch"


MUTATIONS = list(_mutations())


@pytest.mark.parametrize(("case", "kind"), MUTATIONS, ids=[f"{c[0]}-{k}-{i}" for i, (c, k) in enumerate(MUTATIONS)])
def test_an_injected_pointer_problem_is_counted_exactly_by_kind(case, kind):
    answer_format, options, mutate = case
    prefix = {"search": "R", "web": "W"}.get(options.get("kind"), "D")
    clean = _day(answer_format, options, False, twin=False)
    broken = copy.deepcopy(clean)
    mutate(broken)
    judge = _judge(prefix)
    before, after = score_dicts(clean, judge), score_dicts(broken, judge)
    assert after["skipped"] == []
    problems = [p for t in after["turns"] for p in t["pointer_problems"]]
    assert [p["kind"] for p in problems] == [kind]
    counts = after["counts"]
    assert counts["pointer_problem_citations"] == counts[f"pointer_problem_citations_{kind}"] == 1
    assert sum(counts[f"pointer_problem_citations_{k}"] for k in POINTER_PROBLEM_KINDS) == 1
    assert counts["unknown_labels"] == before["counts"]["unknown_labels"] + 1 == 1
    assert counts["citations"] == before["counts"]["citations"]
    assert after["metrics"]["micro"]["unknown_label_rate"] == pytest.approx(1 / counts["citations"])
    assert after["metrics"]["micro"][f"pointer_problem_rate_{kind}"] == pytest.approx(1 / counts["citations"])
    assert after["metrics"]["micro"]["attachment_rate"] <= before["metrics"]["micro"]["attachment_rate"]
    assert after["invariant_violations"] == []


def test_a_link_inside_a_claims_annotation_is_cut_and_the_claim_keeps_its_span():
    """Web search's link inside an annotation that also covers the claim: the link is a marker
    (cut from the judged text), the rest of the range stays the citation's answer span."""
    text = ("Hotels in 東京 cost at most €220 a night 🏨 ([policy.example](https://policy.example/hotel)). "
            "Dinner is paid up to €40 and alcohol never. ([policy.example](https://policy.example/meals))")
    first_end = text.index(")).") + 2
    second = text.index("([policy.example](https://policy.example/meals")
    annotations = [{"type": "url_citation", "url_citation": {"url": url, "title": "", "start_index": s, "end_index": e}}
                   for url, s, e in (("https://policy.example/hotel", 0, first_end),
                                     ("https://policy.example/meals", second, len(text)))]
    base = {"conversation_id": "c", "turn_index": 0, "answered_at": "2026-11-30T09:00:00Z", "question": ""}
    native = {**base, "turn_id": "n", "answer_format": "openai_chat",
              "response": {"role": "assistant", "content": text, "annotations": annotations},
              "request_documents": [{"url": s.url, "title": s.title, "text": s.text} for s in SOURCES]}
    twin = {**base, "turn_id": "n", **markers_twin([Claim("Hotels in 東京 cost at most €220 a night 🏨", (0,)),
                                                    Claim("Dinner is paid up to €40 and alcohol never", (1,),
                                                          after_stop=True)], SOURCES)}
    got, want = score_dicts([native], _judge("D")), score_dicts([twin], _judge("D"))
    assert _sentences(got) == _sentences(want)
    assert [s["text"] for s in got["turns"][0]["sentences"]] == [
        "Hotels in 東京 cost at most €220 a night 🏨.", "Dinner is paid up to €40 and alcohol never."]
    assert _rows(got) == _rows(want)
    assert 0 < got["metrics"]["micro"]["cited_char_share"] < 1


def test_web_results_are_read_from_the_responses_own_search_blocks_when_not_logged_apart():
    turn = _day("anthropic_blocks", {"kind": "web"}, False, twin=False)[0]
    results = turn.pop("web_results")
    turn["answer_blocks"].insert(0, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
        {"type": "web_search_result", "url": r["url"], "title": r["title"], "encrypted_content": "x"}
        for r in results]})
    out = score_dicts([turn], _judge("W"))
    sentences = out["turns"][0]["sentences"]
    assert out["skipped"] == [] and [s["labels"] for s in sentences][:3] == [["W0"], ["W0"], ["W1"]]
    assert {s["unjudged_reason"] for s in sentences[:3]} == {"no_source_text"}  # the blocks carry no page text
