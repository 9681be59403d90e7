"""Where a run's Message Batch id lives, so that a retry of the run reattaches instead of
submitting (and paying for) the batch again."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Protocol, runtime_checkable


@runtime_checkable
class BatchStateStore(Protocol):
    """Persists the batch id a run submitted. The key is the run id plus a digest of the batch."""

    def get(self, run_id: str) -> str | None: ...

    def put(self, run_id: str, batch_id: str) -> None: ...


class MemoryBatchStateStore:
    """For runs without persistence: reattaches only within one process."""

    def __init__(self) -> None:
        self._ids: dict[str, str] = {}

    def get(self, run_id: str) -> str | None:
        return self._ids.get(run_id)

    def put(self, run_id: str, batch_id: str) -> None:
        self._ids[run_id] = batch_id


class JsonFileBatchStateStore:
    """A JSON object {key: batch_id} in a file, replaced atomically on every write."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, run_id: str) -> str | None:
        with self._lock:
            return self._read().get(run_id)

    def put(self, run_id: str, batch_id: str) -> None:
        with self._lock:
            data = self._read()
            data[run_id] = batch_id
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(self.path.suffix + ".tmp")
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.path)
