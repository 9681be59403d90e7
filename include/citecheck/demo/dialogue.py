"""What the sample assistant says besides claims, and what its users send (data/dialogue.json)."""

from __future__ import annotations

from citecheck.demo.knowledge import read_data

_DIALOGUE = read_data("dialogue.json")

REFUSAL_SENTENCES: tuple[str, ...] = tuple(_DIALOGUE["refusal_sentences"])
OFFERS: tuple[str, ...] = tuple(_DIALOGUE["offers"])
# the offers that can follow a refusal
REFUSAL_OFFERS: tuple[str, ...] = tuple(_DIALOGUE["refusal_offers"])
# questions the assistant asks the user back, by domain
USER_QUESTIONS_BY_DOMAIN: dict[str, tuple[str, ...]] = {
    domain: tuple(questions) for domain, questions in _DIALOGUE["user_questions_by_domain"].items()
}
USER_QUESTIONS: tuple[str, ...] = tuple(q for qs in USER_QUESTIONS_BY_DOMAIN.values() for q in qs)
# (domain, question) that the knowledge base cannot answer
REFUSAL_QUESTIONS: tuple[tuple[str, str], ...] = tuple((r["domain"], r["question"])
                                                       for r in _DIALOGUE["refusal_questions"])
# (title, text) of documents users attach to native requests
UPLOADS: tuple[tuple[str, str], ...] = tuple((u["title"], u["text"]) for u in _DIALOGUE["uploads"])
