"""Which turns the judge sees, and in which shard: deterministic per id, the same in the job's
structural step and the CLI's `score` (`Selection`).

THE shard key of a day (`shard_key`): the first 32 bits of the MD5 of the conversation id (UTF-8,
an absent id as ""), as an unsigned integer; a conversation's shard of N is `shard_key % N`. MD5
because both warehouses compute it the same way: PostgreSQL's built-in `md5(text)` (the SQL
function `citecheck_shard_key`, created by the warehouse's `functions.postgresql.sql`) and the
same Python function registered on every SQLite connection (`citecheck.warehouse.engine`), so
`extract_turns.sql` filters a shard in SQL. A conversation never spans shards: its earlier turns
(stale labels) are in its own shard.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from citecheck.stats.sampling import sample_fraction

SHARD_KEY_FUNCTION = "citecheck_shard_key"  # its name in SQL (both dialects)


def shard_key(conversation_id: str | None) -> int:
    """The conversation's shard key: an unsigned 32-bit integer, uniform over ids."""
    digest = hashlib.md5((conversation_id or "").encode("utf-8"), usedforsecurity=False).digest()
    return int.from_bytes(digest[:4], "big")


def shard_of(conversation_id: str | None, shards: int) -> int:
    """The shard of a conversation among `shards` (all its turns go together: stale labels see
    its earlier turns, and the judge's cache is warm)."""
    return shard_key(conversation_id) % shards


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

    def shard(self, conversation_id: str | None) -> int:
        return shard_of(conversation_id, self.shards)
