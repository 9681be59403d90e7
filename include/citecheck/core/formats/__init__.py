"""Every input format becomes one shape before any rule runs (SPEC §3.4): `normalise` turns a
logged turn into answer text, its context set, and each citation's answer span (or position),
label and pointer problems. One module per provider family; nothing downstream of `normalise`
knows which provider wrote the turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from citecheck.core.formats import anthropic, cohere, gemini, markers, openai
from citecheck.core.formats.common import POINTER_PROBLEM_KINDS, Normalised, TurnError, clean_text

ANSWER_FORMATS = ("markers", "anthropic_blocks", "openai_responses", "openai_chat", "cohere_v2", "gemini")
# the fields that hold a native turn's answer and sources (the source table's JSON columns)
NATIVE_FIELDS = ("answer_blocks", "response", "request_documents", "request_search_results", "web_results")


def normalise(data: Mapping[str, Any], answer_format: str) -> Normalised:
    """The answer, context set and citations of a turn in `answer_format`; `TurnError` with the
    reason when the turn's shape cannot be read (one bad citation is a pointer problem instead).
    A value no reader anticipated (a number too large for any arithmetic on it, a nesting too deep)
    is a `TurnError` too: one hostile provider response skips its turn, never the day."""
    try:
        return _normalise(data, answer_format)
    except TurnError:
        raise
    except (ArithmeticError, ValueError, RecursionError) as exc:
        raise TurnError(f"{answer_format} response could not be read ({type(exc).__name__}: {exc})"[:300]) from exc


def _normalise(data: Mapping[str, Any], answer_format: str) -> Normalised:
    if answer_format == "markers":
        return markers.normalise(data)
    if answer_format == "anthropic_blocks":
        out = anthropic.normalise(data)
    elif answer_format in ("openai_responses", "openai_chat"):
        out = openai.normalise(data, chat=answer_format == "openai_chat")
    elif answer_format == "cohere_v2":
        out = cohere.normalise(data)
    elif answer_format == "gemini":
        out = gemini.normalise(data)
    else:
        raise TurnError(f"answer_format {answer_format!r} is not one of {ANSWER_FORMATS}")
    if not out.answer.strip():
        what = "answer_blocks hold" if answer_format == "anthropic_blocks" else "response holds"
        raise TurnError(f"{what} no text")
    return out


__all__ = ["ANSWER_FORMATS", "NATIVE_FIELDS", "POINTER_PROBLEM_KINDS", "Normalised", "TurnError", "clean_text",
           "normalise"]
