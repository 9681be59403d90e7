"""A metric value that keeps its numerator and denominator (SPEC §5: zero denominator → null)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Ratio:
    numerator: float
    denominator: float

    @property
    def value(self) -> float | None:
        return None if not self.denominator else self.numerator / self.denominator

    def as_list(self) -> list[float]:
        return [self.numerator, self.denominator]

    def __add__(self, other: Ratio) -> Ratio:
        return Ratio(self.numerator + other.numerator, self.denominator + other.denominator)
