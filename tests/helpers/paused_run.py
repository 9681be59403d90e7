"""A `citecheck` command line that stops its own process (SIGSTOP) just before one function of
the job runs, so a test can hold a real run at that point for as long as it likes and resume it
(SIGCONT): what a long GC pause, a VM migration or a starved worker does to a run.

`python tests/helpers/paused_run.py MODULE.FUNCTION citecheck-args...`, e.g.
`citecheck.job.steps.publish run --day D` (before the publish step) or
`citecheck.warehouse.runs.record_validation run --day D` (inside the validate step, after it read
the staging, while its lease renewals run).

The process never stops in the middle of a lease renewal (the renewal thread's own short
transaction, unless it waits on the paused thread's transaction): a run stopped holding the lock
row by chance would make whoever takes the day next refuse.
"""

from __future__ import annotations

import functools
import importlib
import os
import signal
import sys
import threading
from typing import Any

_RENEWING = threading.Lock()  # held by a lease renewal in flight, and by the pause


def _renewals_wait_for_the_pause() -> None:
    from citecheck.warehouse import locks

    renew = locks.renew

    @functools.wraps(renew)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        with _RENEWING:
            return renew(*args, **kwargs)

    locks.renew = guarded


def pause_before(target: str) -> None:
    """Make the next call of `target` (`module.function`) stop this process first (once)."""
    module_name, name = target.rsplit(".", 1)
    module = importlib.import_module(module_name)
    function = getattr(module, name)

    @functools.wraps(function)
    def paused(*args: Any, **kwargs: Any) -> Any:
        setattr(module, name, function)
        # no renewal transaction open while stopped; a renewal still waiting after a few seconds waits
        # on this thread's own transaction (a pause inside the publish) and holds nothing itself
        free = _RENEWING.acquire(timeout=5)
        os.kill(os.getpid(), signal.SIGSTOP)  # every thread stops here until SIGCONT
        if free:
            _RENEWING.release()
        return function(*args, **kwargs)

    _renewals_wait_for_the_pause()
    setattr(module, name, paused)


if __name__ == "__main__":
    from citecheck.cli import main

    pause_before(sys.argv[1])
    sys.exit(main(sys.argv[2:]))
