"""A real Apache Superset on 127.0.0.1 for tests: its own venv (`bin/tool-venv superset`), the
compose stack's config (superset/superset_config.py) with its own SQLite metadata database in a temp
dir, `superset db upgrade`, `fab create-admin`, `init`, then gunicorn on a free port. A failure to
build or start it fails the test loudly."""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.tool_venv import tool_venv

ADMIN = "admin"
SHIPPED_CONFIG = Path(__file__).resolve().parents[2] / "superset" / "superset_config.py"


@dataclass
class Superset:
    url: str
    username: str
    password: str
    venv: Path
    env: dict[str, str]

    def cli(self, *args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(self.venv / "bin" / "superset"), *args], env=self.env, capture_output=True,
                              text=True, timeout=timeout)
        if done.returncode != 0:
            pytest.fail(f"superset {' '.join(args)} exited {done.returncode}:\n{done.stdout[-3000:]}\n"
                        f"{done.stderr[-3000:]}")
        return done


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_superset(home: Path, extra_env: dict[str, str] | None = None) -> Iterator[Superset]:
    """`extra_env`: more environment for the Superset processes (the warehouse password)."""
    venv = tool_venv("superset")
    home.mkdir(parents=True, exist_ok=True)
    config = home / "superset_config.py"
    # the compose stack's config (its password store included), then what a test server changes
    config.write_text(
        SHIPPED_CONFIG.read_text(encoding="utf-8") + "\n# the test server's own\n"
        f"SQLALCHEMY_DATABASE_URI = 'sqlite:///{home / 'superset.db'}'\n"
        "WTF_CSRF_ENABLED = False\nTALISMAN_ENABLED = False\n"
        "FEATURE_FLAGS = {'DASHBOARD_RBAC': False}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(SUPERSET_CONFIG_PATH=str(config), SUPERSET_HOME=str(home), FLASK_APP="superset",
               SUPERSET_LOAD_EXAMPLES="no", SUPERSET_SECRET_KEY=secrets.token_urlsafe(32), **(extra_env or {}))
    password = secrets.token_urlsafe(12)
    port = _free_port()
    server = Superset(f"http://127.0.0.1:{port}", ADMIN, password, venv, env)
    server.cli("db", "upgrade", timeout=900)
    server.cli("fab", "create-admin", "--username", ADMIN, "--firstname", "Ada", "--lastname", "Admin",
               "--email", "admin@example.invalid", "--password", password)
    server.cli("init", timeout=900)
    log = (home / "gunicorn.log").open("w")
    proc = subprocess.Popen([str(venv / "bin" / "gunicorn"), "-w", "1", "--threads", "8", "-b", f"127.0.0.1:{port}",
                             "--timeout", "300", "superset.app:create_app()"], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(f"{server.url}/health", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"Superset did not start:\n{(home / 'gunicorn.log').read_text()[-4000:]}")
            time.sleep(2)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
