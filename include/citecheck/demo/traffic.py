"""The sample's traffic mix (data/traffic.toml): attribute and hour weights, failure-kind weights,
and dated step changes of the assistant's citation habits."""

from __future__ import annotations

import datetime as dt
import itertools
import random
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Protocol

_TRAFFIC = tomllib.loads(resources.files("citecheck.demo").joinpath("data", "traffic.toml").read_text(encoding="utf-8"))

MODELS: tuple[tuple[str, float], ...] = tuple(_TRAFFIC["attributes"]["model"].items())
PRODUCTS: tuple[tuple[str, float], ...] = tuple(_TRAFFIC["attributes"]["product"].items())
LOCALES: tuple[tuple[str, float], ...] = tuple(_TRAFFIC["attributes"]["locale"].items())
PROMPTS: tuple[tuple[str, float], ...] = tuple(_TRAFFIC["attributes"]["prompt_version"].items())
HOUR_WEIGHTS: tuple[float, ...] = tuple(_TRAFFIC["conversations"]["hour_weights"])
# per-sentence kind weights of check-worthy claims in markers answers, by model
KIND_WEIGHTS: dict[str, dict[str, float]] = {model: dict(w) for model, w in _TRAFFIC["kind_weights"].items()}
NATIVE_KIND_WEIGHTS: dict[str, float] = dict(_TRAFFIC["native_kind_weights"])
# the opt-in `topic` attribute: (passage id prefix, topic), first match wins (`demo.topics`)
TOPICS: tuple[tuple[str, str], ...] = tuple(_TRAFFIC["topics"].items())


def pick(rng: random.Random, weighted: Sequence[tuple[str, float]]) -> str:
    """One key of (key, weight) pairs, drawn by weight."""
    return rng.choices([k for k, _ in weighted], weights=[w for _, w in weighted])[0]


def attributes(rng: random.Random) -> dict[str, str]:
    """The attributes of a new conversation: model, prompt version, product, locale."""
    return {"model": pick(rng, MODELS), "prompt_version": pick(rng, PROMPTS),
            "product": pick(rng, PRODUCTS), "locale": pick(rng, LOCALES)}


class CitedSentence(Protocol):
    """What a step change needs of a sentence being built (`answers.Sent`)."""

    labels: list[str]
    check_worthy: bool
    supported_by: tuple[str, ...]
    joint: tuple[str, ...]


@dataclass(frozen=True)
class StepChange:
    """From `start` (the UTC day a conversation starts) on, markers answers cite differently.

    `extra_unknown_label_rate`: each citation of a check-worthy claim is followed, with this
    probability, by a label that names no passage of the conversation. `three_marker_share`: each
    check-worthy claim with a label that resolves is padded, with this probability, with passages
    that do not support it until it has three or more distinct labels. Neither changes what
    supports a sentence, so the recorded judgments and expected verdicts stay exact.
    `provider_bug_rate`: the share of provider-format turns (`citecheck.demo.providers`, opt-in)
    logged with their app's pointer bug (None: the usual `providers.BUG_RATE`).
    """

    start: dt.date
    extra_unknown_label_rate: float = 0.0
    three_marker_share: float = 0.0
    provider_bug_rate: float | None = None

    def __post_init__(self) -> None:
        for name in ("extra_unknown_label_rate", "three_marker_share", "provider_bug_rate"):
            if name == "provider_bug_rate" and self.provider_bug_rate is None:
                continue
            value = getattr(self, name)
            if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
                raise ValueError(f"sample change from {self.start}: {name} must be a number in [0, 1], got {value!r}")

    @classmethod
    def from_mapping(cls, entry: Mapping[str, Any]) -> StepChange:
        """A change from a data-file entry: `from` (a date or YYYY-MM-DD) and the rates above."""
        known = {"from", "extra_unknown_label_rate", "three_marker_share", "provider_bug_rate"}
        unknown = sorted(set(entry) - known)
        if unknown or "from" not in entry:
            raise ValueError(f"sample change {dict(entry)!r}: needs 'from', may have {sorted(known - {'from'})}"
                             + (f", unknown {unknown}" if unknown else ""))
        start = entry["from"]
        try:
            start = dt.date.fromisoformat(start) if isinstance(start, str) else start
        except ValueError:
            start = None
        if not isinstance(start, dt.date) or isinstance(start, dt.datetime):
            raise ValueError(f"sample change: 'from' must be a date (YYYY-MM-DD), got {entry['from']!r}")
        rates = {k: v for k, v in entry.items() if k != "from"}
        return cls(start, **rates)

    def apply(self, rng: random.Random, sents: Iterable[CitedSentence], context_labels: Sequence[str],
              first_ghost: int) -> None:
        """Pad and add ghost labels (`S<first_ghost>`..`S9`) to the check-worthy cited sentences."""
        for sent in sents:
            if not sent.check_worthy or not sent.labels:
                continue
            if any(lab in context_labels for lab in sent.labels) and rng.random() < self.three_marker_share:
                spare = [lab for lab in context_labels
                         if lab not in sent.labels and lab not in sent.supported_by and lab not in sent.joint]
                rng.shuffle(spare)
                sent.labels = sent.labels + spare[:max(0, 3 - len(set(sent.labels)))]
            if self.extra_unknown_label_rate:
                labels: list[str] = []
                for lab in sent.labels:
                    labels.append(lab)
                    ghosts = [f"S{k}" for k in range(first_ghost, 10) if f"S{k}" not in labels]
                    if ghosts and rng.random() < self.extra_unknown_label_rate:
                        labels.append(rng.choice(ghosts))
                sent.labels = labels


def changes_from(entries: Iterable[Mapping[str, Any]]) -> tuple[StepChange, ...]:
    """Changes from data-file entries, in date order; two changes on one day are an error."""
    changes = tuple(sorted((StepChange.from_mapping(e) for e in entries), key=lambda c: c.start))
    for a, b in itertools.pairwise(changes):
        if a.start == b.start:
            raise ValueError(f"sample changes: two changes from {a.start}")
    return changes


BUNDLED_CHANGES: tuple[StepChange, ...] = changes_from(_TRAFFIC.get("changes", ()))


def change_on(day: dt.date, changes: Sequence[StepChange]) -> StepChange | None:
    """The change in force on `day` (the latest one that started on or before it), if any."""
    current = None
    for change in changes:
        if change.start <= day:
            current = change
    return current
