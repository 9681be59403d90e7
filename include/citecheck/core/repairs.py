"""What the input needed and got (`runs.stats["input_repairs"]`): counted per day, chunk by chunk."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from citecheck.core.config import Config
from citecheck.core.languages import INVALID_LANGUAGE_TAG
from citecheck.core.model import StructuredTurn, Turn

# Always reported, zero when nothing was repaired; `assumed_zone:<zone>` keys come on top.
REPAIR_COUNTS = ("replaced_characters", "zoneless_timestamps", "malformed_markers", INVALID_LANGUAGE_TAG)


def input_repairs(rows: Sequence[Mapping[str, Any]], turns: Sequence[Turn], config: Config) -> Counter[str]:
    """What the input of a chunk of the day needed: characters the load replaced (NUL, lone
    surrogates → U+FFFD), timestamps without a zone (per zone assumed: `zoneless_timestamps` and
    `assumed_zone:<zone>`), and markers opened but never closed in the scored answers. `rows`: the
    extracted turn dicts (their `input_repairs`), `turns`: the chunk's turns that parsed."""
    from citecheck.core.parsing import malformed_markers

    out: Counter[str] = Counter()
    for row in rows:
        repairs = row.get("input_repairs") or {}
        out["replaced_characters"] += int(repairs.get("replaced_characters") or 0)
        if zone := repairs.get("assumed_zone"):
            out["zoneless_timestamps"] += 1
            out[f"assumed_zone:{zone}"] += 1
    for turn in turns:
        if turn.answer_format == "markers":  # a native format's citations are structured, not typed
            out["malformed_markers"] += malformed_markers(turn.answer, config)
    return out


def language_repairs(structured: Iterable[StructuredTurn]) -> Counter[str]:
    """Turns whose logged language tag is not BCP 47 (`invalid_language_tag`): their language was
    detected instead (SPEC §2.2)."""
    return Counter(st.language_repair for st in structured if st.language_repair)


def repair_totals(counts: Mapping[str, int]) -> dict[str, int]:
    """The day's repairs as reported: every REPAIR_COUNTS key (0 when none), then the zones."""
    return {**dict.fromkeys(REPAIR_COUNTS, 0), **counts}
