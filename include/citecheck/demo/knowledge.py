"""The sample's knowledge base (data/knowledge_base.json) and how a claim is worded.

Why the recorded judgments stay correct without a per-turn table: a recorded judge maps a
statement *text* to the labels that support it, yet the same passage sits under different labels
in different turns. So the wording of a claim is a function of where its supporting passage sits
(`S1` → one paraphrase, `S2` → another, absent → a third …). A text therefore always comes with
the same supporting label, in every turn and every generated day.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


def read_data(name: str) -> Any:
    """A JSON data file of the package (`data/<name>`)."""
    return json.loads(resources.files("citecheck.demo").joinpath("data", name).read_text(encoding="utf-8"))


_KB = read_data("knowledge_base.json")

# Lead-ins that reword a claim without changing what it says.
PREFIXES: tuple[str, ...] = tuple(_KB["prefixes"])

# (key namespace, position): "S" markers are 1-based prompt labels, "D" native document indexes
# are 0-based; position None = the supporting passage is not in the context set. Most frequent first.
SINGLE_KEYS: tuple[tuple[str, int | None], ...] = (
    ("S", 1), ("S", 2), ("S", 3), ("D", 1), ("S", 4), ("D", 2), ("S", None), ("D", 0), ("S", 5),
    ("D", 3), ("S", 6), ("D", 4), ("D", 5),
)
# (position of a, position of b) of the two passages a joint claim needs, both among S1..S4.
JOINT_KEYS: tuple[tuple[int, int], ...] = tuple(
    (a, b) for a in range(1, 5) for b in range(1, 5) if a != b
)
DOMAIN_VERSIONS: dict[str, str] = dict(_KB["domain_versions"])


@dataclass(frozen=True)
class KBPassage:
    """A knowledge-base section: what retrieval puts in a prompt, and the claims it supports."""

    pid: str
    domain: str
    source: str
    text: str
    question: str
    claims: tuple[Claim, ...]
    wrong: tuple[str, ...]


@dataclass(frozen=True)
class Claim:
    """A fact of one passage, worded by where that passage sits (see the module docstring)."""

    pid: str
    paraphrases: tuple[str, ...]
    ordinal: int = 0

    def text(self, key: tuple[str, int | None]) -> str:
        return variants(self.paraphrases, self.ordinal)[SINGLE_KEYS.index(key)]


@dataclass(frozen=True)
class JointClaim:
    """A sentence that needs passages `a` and `b` together; worded by their two positions."""

    a: str
    b: str
    paraphrases: tuple[str, ...]
    ordinal: int = 0

    def text(self, positions: tuple[int, int]) -> str:
        return variants(self.paraphrases, self.ordinal)[JOINT_KEYS.index(positions)]


def _decap(sentence: str) -> str:
    """Lower-case the first letter for a lead-in, unless the first word is an acronym."""
    first = sentence.split(" ", 1)[0]
    if sum(ch.isupper() for ch in first) > 1:
        return sentence
    return sentence[:1].lower() + sentence[1:]


@cache
def variants(paraphrases: tuple[str, ...], ordinal: int) -> tuple[str, ...]:
    """Every wording of a claim: plain paraphrases first (the most frequent keys get them), then
    lead-in rewordings.

    The lead-ins rotate by the claim's ordinal, so claims sharing a position in one answer do
    not all start with the same words.
    """
    out = list(paraphrases)
    for i in range(len(PREFIXES)):
        prefix = PREFIXES[(i + ordinal) % len(PREFIXES)]
        for j in range(len(paraphrases)):
            out.append(prefix + _decap(paraphrases[(i + j) % len(paraphrases)]))
    return tuple(out)


def label_key(label: str) -> tuple[str, int]:
    """Sort key of a label such as `S10` or `D2`: namespace, then number."""
    return (label[0], int(label[1:]))


def _build_kb() -> tuple[dict[str, KBPassage], dict[str, list[KBPassage]], tuple[JointClaim, ...]]:
    passages: dict[str, KBPassage] = {}
    by_domain: dict[str, list[KBPassage]] = {}
    ordinal = 0
    for row in _KB["passages"]:
        built = []
        for c in row["claims"]:
            built.append(Claim(row["id"], tuple(c), ordinal))
            ordinal += 1
        passage = KBPassage(row["id"], row["domain"], row["source"], row["text"], row["question"], tuple(built),
                            tuple(row["wrong"]))
        passages[passage.pid] = passage
        by_domain.setdefault(passage.domain, []).append(passage)
    joints = tuple(JointClaim(j["a"], j["b"], tuple(j["paraphrases"]), i) for i, j in enumerate(_KB["joint_claims"]))
    for claim in (c for p in passages.values() for c in p.claims):
        if len(variants(claim.paraphrases, claim.ordinal)) < len(SINGLE_KEYS):
            raise ValueError(f"sample knowledge base: claim {claim.paraphrases[0]!r} needs more paraphrases")
    return passages, by_domain, joints


PASSAGES, BY_DOMAIN, JOINTS = _build_kb()
JOINTS_OF: dict[str, list[JointClaim]] = {}
for _joint in JOINTS:
    JOINTS_OF.setdefault(_joint.a, []).append(_joint)
    JOINTS_OF.setdefault(_joint.b, []).append(_joint)
