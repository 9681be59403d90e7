"""One migrated Airflow metadata database per Airflow version, copied per test.

`airflow db migrate` on a fresh SQLite file costs each `dag.test()` test several CPU-seconds;
the suite migrates once (under a file lock, so parallel pytest-xdist workers share it) into a
template keyed by the installed Airflow version and its migration heads, then copies the file
into each test's own AIRFLOW_HOME. A copy is an ordinary, fully migrated database: `bin/run_dag.py`
finds it current and skips the migration."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from filelock import FileLock


def _template_key() -> str:
    import airflow

    migrations = Path(airflow.__file__).parent / "migrations" / "versions"
    names = sorted(p.name for p in migrations.glob("*.py"))
    digest = hashlib.sha256("\n".join([airflow.__version__, *names]).encode()).hexdigest()[:16]
    return f"airflow-{airflow.__version__}-{digest}"


def migrated_template() -> Path:
    """The migrated template for this Airflow, created on first use (cached across runs)."""
    root = Path(tempfile.gettempdir()) / "citecheck-test-airflow-db"
    root.mkdir(parents=True, exist_ok=True)
    template = root / f"{_template_key()}.db"
    with FileLock(str(template) + ".lock"):
        if not template.exists():
            partial = template.with_suffix(f".partial-{os.getpid()}")
            partial.unlink(missing_ok=True)
            home = Path(tempfile.mkdtemp(prefix="airflow-home-", dir=root))
            env = dict(os.environ, AIRFLOW_HOME=str(home), AIRFLOW__CORE__LOAD_EXAMPLES="False",
                       AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{partial}")
            done = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, capture_output=True,
                                  text=True, check=False)
            shutil.rmtree(home, ignore_errors=True)
            if done.returncode != 0:
                partial.unlink(missing_ok=True)
                raise RuntimeError(f"airflow db migrate failed:\n{done.stderr[-3000:]}")
            partial.replace(template)
    return template


def copy_migrated_db(dest: Path) -> Path:
    """A fresh copy of the migrated metadata database at `dest` (for one test's AIRFLOW_HOME)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(migrated_template(), dest)
    return dest
