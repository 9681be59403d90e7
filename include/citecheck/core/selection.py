"""Which turns the judge sees, and in which shard: deterministic per id, the same in the job's
structural step and the CLI's `score` (`Selection`)."""

from __future__ import annotations

from dataclasses import dataclass

from citecheck.stats.sampling import sample_fraction


def shard_of(conversation_id: str, shards: int) -> int:
    """The judge shard of a conversation (all its turns judge together, so the cache is warm)."""
    return int(sample_fraction(conversation_id, salt="shard") * shards)


def is_selected(turn_id: str, share: float, salt: str) -> bool:
    """Whether a turn is in the judged share (deterministic per turn id and salt)."""
    return sample_fraction(turn_id, salt=salt) < share


@dataclass(frozen=True)
class Selection:
    """The judged share of a day's turns (`share`, hash-selected with `salt`) and its shards."""

    share: float = 1.0
    salt: str = ""
    shards: int = 1

    def selected(self, turn_id: str) -> bool:
        return is_selected(turn_id, self.share, self.salt)

    def shard(self, conversation_id: str) -> int:
        return shard_of(conversation_id, self.shards)
