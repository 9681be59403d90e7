"""Support judges (SPEC §4) behind one interface, built from a judge file.

A judge file is JSON with a `kind`; `load_judge` validates it before any work starts. Each kind
lives in its own module, imported only when used, so a recorded-judge run never imports torch.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from citecheck.judges.base import Judge, JudgeSpecError

JUDGE_MODULES: dict[str, str] = {
    "recorded": "citecheck.judges.recorded",
    "nli": "citecheck.judges.nli",
    "anthropic": "citecheck.judges.llm",
    "cascade": "citecheck.judges.cascade",
}

__all__ = ["Judge", "JudgeSpecError", "judge_from_spec", "load_judge", "read_judge_file"]


def read_judge_file(path: str | Path) -> dict[str, Any]:
    """Read a judge file; a missing or non-JSON file is a `JudgeSpecError`."""
    try:
        spec = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise JudgeSpecError(f"judge file not found: {path}") from exc
    except json.JSONDecodeError as exc:
        raise JudgeSpecError(f"judge file {path} is not valid JSON: {exc}") from exc
    if not isinstance(spec, dict):
        raise JudgeSpecError(f"judge file {path} must hold a JSON object with a 'kind'")
    return spec


def judge_from_spec(spec: Mapping[str, Any], **options: Any) -> Judge:
    """Build the judge a spec describes; unknown kinds and bad fields fail here, before work."""
    if not isinstance(spec, Mapping):
        raise JudgeSpecError("a judge spec must be a JSON object with a 'kind'")
    kind = spec.get("kind")
    if kind not in JUDGE_MODULES:
        raise JudgeSpecError(f"unknown judge kind {kind!r}; expected one of {sorted(JUDGE_MODULES)}")
    module = importlib.import_module(JUDGE_MODULES[kind])
    return module.from_spec(spec, **options)


def load_judge(path: str | Path, **options: Any) -> Judge:
    """Read and build the judge of a judge file."""
    return judge_from_spec(read_judge_file(path), **options)
