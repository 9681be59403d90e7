"""A real `airflow api-server` for tests: a private AIRFLOW_HOME under a temporary folder, a free
port on 127.0.0.1, the repository's plugins, SimpleAuthManager users with known passwords.

`ApiServer.start()` migrates the metadata database, starts the server in its own session and
waits for its health endpoint; `stop()` ends exactly that process (and its workers, which share
its process group) and nothing else.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from helpers import REPO

# user -> (SimpleAuthManager role, password); "nobody" has no role, so no permission at all
USERS = {"admin": ("admin", "admin-pass"), "viewer": ("viewer", "viewer-pass"), "nobody": ("", "nobody-pass")}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class ApiServer:
    home: Path
    env_extra: Mapping[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
        dags = self.home / "dags"
        dags.mkdir(parents=True, exist_ok=True)
        passwords = self.home / "passwords.json"
        passwords.write_text(json.dumps({name: pw for name, (_role, pw) in USERS.items()}), encoding="utf-8")
        env.update({
            "AIRFLOW_HOME": str(self.home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "AIRFLOW__CORE__LAZY_LOAD_PLUGINS": "False",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{self.home}/airflow.db",
            "AIRFLOW__CORE__AUTH_MANAGER":
                "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": ",".join(f"{n}:{r}" for n, (r, _pw) in USERS.items()),
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
            "AIRFLOW__API_AUTH__JWT_SECRET": os.urandom(16).hex(),
            "AIRFLOW__API__BASE_URL": self.base_url,
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(self.port),
            "PYTHONPATH": os.pathsep.join([str(REPO / "include"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        })
        env.update(self.env_extra)
        return env

    def start(self, timeout: float = 240.0) -> ApiServer:
        env = self.env()
        airflow = [sys.executable, "-m", "airflow"]
        migrate = subprocess.run([*airflow, "db", "migrate"], env=env, capture_output=True, text=True, check=False)
        if migrate.returncode != 0:
            raise RuntimeError(f"airflow db migrate failed:\n{migrate.stderr[-3000:]}")
        log = (self.home / "api-server.log").open("wb")
        self.process = subprocess.Popen([*airflow, "api-server", "--host", "127.0.0.1", "--port", str(self.port),
                                         "--workers", "1"], env=env, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"airflow api-server exited ({self.process.returncode}):\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/api/v2/monitor/health", timeout=5) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(1)
        self.stop()
        raise RuntimeError(f"airflow api-server did not answer within {timeout:.0f}s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        path = self.home / "api-server.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def stop(self) -> None:
        """End the server we started: its process group (the server and the workers it forked)."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def token(self, user: str) -> str:
        """A JWT for a configured user from the auth manager's `/auth/token`."""
        _role, password = USERS[user]
        request = urllib.request.Request(f"{self.base_url}/auth/token", method="POST",
                                         data=json.dumps({"username": user, "password": password}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())["access_token"]
