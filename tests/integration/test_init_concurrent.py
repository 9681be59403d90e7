"""Inits that start together: a day's shard tasks on several workers, or two loads, each open the
warehouse with `init_warehouse` at once. On PostgreSQL two concurrent `CREATE OR REPLACE` of one
function or view fail with "tuple concurrently updated" (a `load-events` process of
`test_load_events.py`'s concurrent loads exited 5 with it in CI); the inits now take turns."""

from __future__ import annotations

import threading

import sqlalchemy as sa

from citecheck import warehouse as W

STARTED_TOGETHER = 8


def test_inits_started_together_all_succeed(engine):
    url = engine.url.render_as_string(hide_password=False)
    errors: list[BaseException] = []
    gate = threading.Barrier(STARTED_TOGETHER)

    def open_warehouse() -> None:
        other = W.make_engine(url)
        try:
            gate.wait()
            W.init_warehouse(other)
        except BaseException as exc:  # collected, and shown by the assertion
            errors.append(exc)
        finally:
            other.dispose()

    for _ in range(3):
        threads = [threading.Thread(target=open_warehouse) for _ in range(STARTED_TOGETHER)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == [], [str(e).splitlines()[0] for e in errors]
    with engine.connect() as conn:  # the warehouse is whole afterwards: the shard key answers
        assert conn.execute(sa.text("SELECT citecheck_shard_key('conv-1')")).scalar_one() is not None
