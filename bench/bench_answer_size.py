"""Work per answer is linear (issue 31 item 6): one huge native answer, parsed and structured.

Each case builds one turn and times `turn_from_dict` (the format's normalisation and pointer
checks) plus `structure_turn` (sentences, attachment of citations to sentences, labels, figures),
in a fresh child process warmed on a 3-citation answer of the same shape (models and regexes
loaded), and prints the time and the child's peak RSS. Cases: an Anthropic answer of 2,000
sentences each cited (2,000 citations, all counted), an OpenAI answer with 4,000 markdown links,
4,000 `page_location` citations on a 300 KB PDF (one a sentence), and the shapes the caps refuse
fast: 2,000 block-wide citations (every sentence carrying all of them: over
`max_citations_per_sentence`) and 10,000 OpenAI links (over `max_citations_per_turn`).
Goal: a 2,000-citation answer under 2 s (CPU seconds, printed beside the wall clock) and 300 MB.

Run: `.venv/bin/python bench/bench_answer_size.py`.
"""

from __future__ import annotations

import json
import platform
import resource
import subprocess
import sys
import time
from typing import Any

GOAL_S, GOAL_MB = 2.0, 300
CASES = [("anthropic_per_sentence", 2000), ("anthropic_blockwide", 2000), ("openai_links", 4000),
         ("anthropic_pages", 4000), ("openai_links", 10000)]


def anthropic_per_sentence(n: int) -> dict[str, Any]:
    facts = [f"Fact {i} is that item {i} costs {i} units." for i in range(n)]
    doc, offsets, at = " ".join(facts), [], 0
    for fact in facts:
        offsets.append(at)
        at += len(fact) + 1
    blocks = [{"type": "text", "text": f"Item {i} costs {i} units per month. ", "citations": [{
        "type": "char_location", "document_index": 0, "document_title": "Doc", "cited_text": fact,
        "start_char_index": offsets[i], "end_char_index": offsets[i] + len(fact)}]} for i, fact in enumerate(facts)]
    return _anthropic(blocks, [{"title": "Doc", "text": doc}])


def anthropic_blockwide(n: int) -> dict[str, Any]:
    doc = "Every item costs units per month."
    text = " ".join(f"Item {i} costs {i} units per month." for i in range(n))
    cites = [{"type": "char_location", "document_index": 0, "document_title": "Doc", "cited_text": doc,
              "start_char_index": 0, "end_char_index": len(doc)}] * n
    return _anthropic([{"type": "text", "text": text, "citations": cites}], [{"title": "Doc", "text": doc}])


def anthropic_pages(n: int, kb: int = 300) -> dict[str, Any]:
    page = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 60
    count = kb * 1024 // len(page)
    pages = [f"{page} Page fact {p}." for p in range(count)]
    blocks = [{"type": "text", "text": f"Item {i} is on a page. ", "citations": [{
        "type": "page_location", "document_index": 0, "document_title": "PDF", "cited_text": f"Page fact {i % count}.",
        "start_page_number": 1, "end_page_number": count + 1}]} for i in range(n)]  # each cites the whole PDF
    return _anthropic(blocks, [{"title": "PDF", "pages": pages}])


def _anthropic(blocks: list[dict[str, Any]], documents: list[dict[str, Any]]) -> dict[str, Any]:
    return {"turn_id": "t", "answered_at": "2026-11-30T10:00:00Z", "answer_format": "anthropic_blocks",
            "answer_blocks": blocks, "request_documents": documents}


def openai_links(n: int) -> dict[str, Any]:
    parts, annotations, at = [], [], 0
    for i in range(n):
        url = f"https://example.com/p{i % 50}"
        sentence = f"Item {i} costs {i} units per month ([example.com]({url})). "
        start = sentence.index("([")
        annotations.append({"type": "url_citation", "url": url, "title": f"P{i % 50}", "start_index": at + start,
                            "end_index": at + sentence.index(")).") + 2})
        parts.append(sentence)
        at += len(sentence)
    return {"turn_id": "t", "answered_at": "2026-11-30T10:00:00Z", "answer_format": "openai_responses",
            "response": {"output": [{"type": "message", "content": [
                {"type": "output_text", "text": "".join(parts), "annotations": annotations}]}]},
            "request_documents": [{"url": f"https://example.com/p{k}", "title": f"P{k}",
                                   "text": f"Page {k} says items cost units."} for k in range(50)]}


def child(kind: str, n: int) -> dict[str, Any]:
    """One case in this process: warm on 3 citations, then time the big answer."""
    from citecheck.core.config import Config
    from citecheck.core.formats import TurnError
    from citecheck.core.structural import structure_turn
    from citecheck.core.turns import turn_from_dict

    make = globals()[kind]
    structure_turn(turn_from_dict(make(3)), Config())
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    data = make(n)
    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        structured = structure_turn(turn_from_dict(data), Config())
        outcome = f"scored: {len(structured.sentences)} sentences ({structured.language}, {structured.language_source})"
    except TurnError as exc:
        outcome = f"skipped: {exc}"
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"case": kind, "citations": n, "seconds": round(seconds, 2), "cpu_seconds": round(cpu_seconds, 2),
            "peak_mb": round(peak), "warm_mb": round(baseline), "outcome": outcome}


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            return next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def main() -> None:
    import os

    print(f"CPU: {_cpu()} ({os.cpu_count()} CPUs), Python {platform.python_version()}")
    for kind, n in CASES:
        out = subprocess.run([sys.executable, __file__, "--child", kind, str(n)], capture_output=True, text=True,
                             check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        # the goal is read on CPU seconds: on a shared machine the wall clock also counts other work
        goal = "" if "2000" not in str(n) else (" (goal met)" if r["cpu_seconds"] < GOAL_S and r["peak_mb"] < GOAL_MB
                                                 else " (goal MISSED)")
        print(f"{kind:<24} {n:>6} citations  {r['seconds']:>6.2f} s wall  {r['cpu_seconds']:>6.2f} s CPU  "
              f"peak RSS {r['peak_mb']:>4} MB (warm process {r['warm_mb']} MB){goal}  {r['outcome']}")
    print(f"load average at the end: {' / '.join(f'{x:.1f}' for x in os.getloadavg())} (1 / 5 / 15 min)")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], int(sys.argv[3]))))
    else:
        main()
