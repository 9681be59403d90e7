"""Deterministic sampling: a hash, not a random generator, so a rerun selects the same units.

`sample_fraction(turn_id, sentence_index, salt=...) < rate` picks a unit at `rate`. The salt
separates independent samples (the LLM escalation sample, the NLI turn selection), so that
changing one does not change the other, and a new salt draws a fresh sample.
"""

from __future__ import annotations

import hashlib

_SEP = "\x1f"  # a separator that cannot appear in ids, so ("a", "bc") and ("ab", "c") differ


def sample_fraction(*parts: str | int, salt: str) -> float:
    """A number in [0, 1), uniform over inputs and stable across runs, machines and Python versions.

    Parts are compared as text, so `3` and `"3"` give the same fraction.
    """
    text = _SEP.join([salt, *(str(p) for p in parts)])
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64
