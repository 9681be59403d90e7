"""A local Airflow deployment without Docker: `bin/airflow-dev up [--celery] | status | down |
restart COMPONENT | api METHOD PATH [JSON] | airflow ARGS...`.

`up` starts what a production deployment runs, as separate processes on this machine: a Postgres
metadata database of its own (`AIRFLOW_DEV_DB_URL`, default the local server's database
`airflow_dev_<hash of AIRFLOW_HOME>`: created, or reset when `up` starts a deployment where none
was before, so no deployment sees another's runs or backfills), the api-server (UI, REST API,
execution API), the scheduler, the dag-processor and the triggerer; with `--celery` the
CeleryExecutor on the local Redis (`AIRFLOW_DEV_BROKER_URL`) with its result backend in the
metadata database, and two workers: one on the queue `default`, one on the NLI queue. It also sets
the pool `nli`, the connection `citecheck_warehouse` (type `postgres`) from
`CITECHECK_WAREHOUSE_URL`, and passes `CITECHECK_JUDGE` / `CITECHECK_CONFIG` on. It returns once
the scheduler, dag-processor and api-server answer and the DAG is parsed, and prints the UI
address.

Everything lives in `AIRFLOW_HOME` (default `.airflow-dev/` in the repository): the state file
`airflow-dev.json` (the PIDs `up` started, the ports, the environment the processes got; mode
0600, it holds the deployment's secrets), each process's output under `processes/`, task logs
under `logs/`. Ports are free ones picked at `up` (never the defaults 8080/8793), so several
deployments can share a machine; with Celery, each deployment's Redis keys carry its own prefix.
`down` first cancels the deployment's backfills that have not completed (else a later `backfill
create` of the DAG fails with AlreadyRunningBackfill), then stops exactly the processes `up` started
(each leads its own process group). `airflow backfill create` of a paused DAG is refused with the
command that unpauses it: a paused DAG's backfill runs stay queued for ever, silently. Any `AIRFLOW__*`
variable set in the caller's environment wins over the defaults chosen here.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DAG_ID = "citation_metrics_daily"
STATE_FILE = "airflow-dev.json"
USER = "admin"
DEFAULT_DB_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432"
DEFAULT_BROKER_URL = "redis://127.0.0.1:6379/0"
# Longer than the longest execution_timeout in the DAG (escalate: 25 h, a Message Batch may take
# 24 h): a task still running when the timeout passes would be redelivered to a second worker.
VISIBILITY_TIMEOUT_S = 26 * 3600
READY_TIMEOUT_S = float(os.environ.get("AIRFLOW_DEV_READY_TIMEOUT_S", "300"))


class DevError(RuntimeError):
    """A step of the deployment failed; the message says which and where its output is."""


# --- paths and state ---------------------------------------------------------------------------

def airflow_home() -> Path:
    return Path(os.environ.get("AIRFLOW_HOME") or REPO / ".airflow-dev").resolve()


def default_db_url(home: Path) -> str:
    """The deployment's own metadata database: one per AIRFLOW_HOME on the local server."""
    import hashlib

    return f"{DEFAULT_DB_SERVER}/airflow_dev_{hashlib.sha256(str(home).encode()).hexdigest()[:10]}"


def state_path(home: Path) -> Path:
    return home / STATE_FILE


def read_state(home: Path | None = None) -> dict[str, Any]:
    """The state `up` wrote; an error naming the file when there is none."""
    path = state_path(home or airflow_home())
    if not path.exists():
        raise DevError(f"no deployment at {path.parent} (run `bin/airflow-dev up` first)")
    return json.loads(path.read_text())


def write_state(home: Path, state: Mapping[str, Any]) -> None:
    path = state_path(home)
    tmp = path.with_suffix(".tmp")
    tmp.touch(mode=0o600)
    tmp.write_text(json.dumps(state, indent=2))
    tmp.replace(path)


def python() -> str:
    """The interpreter of the Airflow processes: the one running this script (bin/airflow-dev
    picks the repository's .venv, or AIRFLOW_DEV_PYTHON)."""
    return sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- the environment ---------------------------------------------------------------------------

def async_url(url: str) -> str:
    """The metadata DB URL with the asyncpg driver (`[database] sql_alchemy_conn_async`): without
    it Airflow derives an asyncpg URL itself and fails on any psycopg-only query option."""
    scheme, rest = url.split("://", 1)
    if not scheme.startswith("postgres"):
        raise DevError(f"the metadata database must be PostgreSQL, got {scheme}://")
    return "postgresql+asyncpg://" + rest


def warehouse_connection(url: str) -> dict[str, Any] | None:
    """The Airflow connection (type `postgres`, as `airflow connections import` reads it) for a
    PostgreSQL warehouse URL; None for any other database (the DAG then falls back to
    CITECHECK_WAREHOUSE_URL)."""
    parts = urllib.parse.urlsplit(url)
    if not parts.scheme.startswith("postgres"):
        return None
    extra = dict(urllib.parse.parse_qsl(parts.query))
    conn: dict[str, Any] = {"conn_type": "postgres", "host": parts.hostname or "127.0.0.1",
                            "port": parts.port or 5432, "schema": parts.path.lstrip("/"),
                            "login": urllib.parse.unquote(parts.username or "") or None,
                            "password": urllib.parse.unquote(parts.password or "") or None}
    if extra:
        conn["extra"] = json.dumps(extra)
    return {k: v for k, v in conn.items() if v is not None}


def deployment_env(home: Path, *, celery: bool, ports: Mapping[str, int], db_url: str, broker_url: str,
                   secrets_: Mapping[str, str], prefix: str) -> dict[str, str]:
    """The variables every process of the deployment gets (the caller's AIRFLOW__* win)."""
    api = f"http://127.0.0.1:{ports['api-server']}"
    env = {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor" if celery else "LocalExecutor",
        "AIRFLOW__CORE__PARALLELISM": "8",
        "AIRFLOW__CORE__FERNET_KEY": secrets_["fernet_key"],
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{api}/execution/",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:admin",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": db_url,
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC": async_url(db_url),
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(ports["api-server"]),
        "AIRFLOW__API__BASE_URL": api,
        "AIRFLOW__API__SECRET_KEY": secrets_["api_secret_key"],
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets_["jwt_secret"],
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(ports["log-server"]),
        "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(ports["trigger-log-server"]),
        "CITECHECK_NLI_QUEUE": os.environ.get("CITECHECK_NLI_QUEUE") or "nli",
        "GX_ANALYTICS_ENABLED": "False",
        # the repository's own package first (whatever the venv's editable install points at)
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "include"), os.environ.get("PYTHONPATH")) if p),
    }
    if celery:
        env.update({
            "AIRFLOW__CELERY__BROKER_URL": broker_url,
            "AIRFLOW__CELERY__RESULT_BACKEND": "db+" + db_url,
            "AIRFLOW__CELERY_BROKER_TRANSPORT_OPTIONS__VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT_S),
            # one deployment's queues never mix with another's on a shared Redis
            "AIRFLOW__CELERY_BROKER_TRANSPORT_OPTIONS__GLOBAL_KEYPREFIX": prefix,
        })
    for name, value in os.environ.items():
        if name.startswith("AIRFLOW__") and name not in ("AIRFLOW__CORE__EXECUTOR",):
            env[name] = value
    for name in ("CITECHECK_WAREHOUSE_URL", "CITECHECK_JUDGE", "CITECHECK_CONFIG", "CITECHECK_WAREHOUSE_CONN_ID",
                 "CITECHECK_MIN_TURNS", "ANTHROPIC_API_KEY", "HF_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def components(celery: bool, nli_queue: str) -> dict[str, list[str]]:
    """Each long-running process: its name and its `airflow` arguments."""
    procs = {
        "api-server": ["api-server", "--workers", "1"],
        "scheduler": ["scheduler"],
        "dag-processor": ["dag-processor"],
        "triggerer": ["triggerer"],
    }
    if celery:
        concurrency = os.environ.get("AIRFLOW_DEV_WORKER_CONCURRENCY", "2")
        nli_concurrency = os.environ.get("CITECHECK_NLI_WORKER_CONCURRENCY", "1")
        procs["worker-default"] = ["celery", "worker", "--queues", "default", "--concurrency", concurrency,
                                   "--celery-hostname", "default@%h", "--skip-serve-logs"]
        procs["worker-nli"] = ["celery", "worker", "--queues", nli_queue, "--concurrency", nli_concurrency,
                               "--celery-hostname", "nli@%h", "--skip-serve-logs"]
    return procs


# --- processes ---------------------------------------------------------------------------------

def airflow_cmd(args: Sequence[str]) -> list[str]:
    return [python(), "-m", "airflow", *args]


def run_airflow(env: Mapping[str, str], args: Sequence[str], *, what: str, timeout: float = 600) -> str:
    """One `airflow` CLI command to completion; its output, or an error with the tail of it."""
    out = subprocess.run(airflow_cmd(args), env=dict(env), capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise DevError(f"{what} failed (`airflow {' '.join(args)}`, exit {out.returncode}):\n"
                       f"{(out.stdout + out.stderr)[-3000:]}")
    return out.stdout


def start(home: Path, name: str, args: Sequence[str], env: Mapping[str, str]) -> int:
    """Start one component in its own process group, output to processes/NAME.log; its PID."""
    logs = home / "processes"
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / f"{name}.log", "ab") as out:
        proc = subprocess.Popen(airflow_cmd(args), env=dict(env), stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, cwd=home)
    return proc.pid


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped) is not alive
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (from /proc), children first listed after their parents."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def stop(pids: Sequence[int], *, grace_s: float = 20.0) -> None:
    """Stop components started by `start`, all at once: SIGTERM to each one's process group and to
    anything below it that left the group; SIGKILL to what still runs after `grace_s`."""
    leaders = set(pids)
    tree = [p for pid in pids for p in (pid, *descendants(pid))]
    for target in tree:
        _signal(target, signal.SIGTERM, group=target in leaders)
    deadline = time.monotonic() + grace_s
    while any(alive(p) for p in tree) and time.monotonic() < deadline:
        time.sleep(0.2)
    for target in (p for p in tree if alive(p)):
        _signal(target, signal.SIGKILL, group=target in leaders)


def _signal(pid: int, sig: int, *, group: bool) -> None:
    try:
        if group and os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# --- the REST API ------------------------------------------------------------------------------

class Api:
    """The deployment's REST API (v2) as the `admin` user; JSON in, JSON out."""

    def __init__(self, state: Mapping[str, Any]) -> None:
        self.base = state["ui_url"]
        self.password = state["password"]
        self._token: str | None = None

    def token(self) -> str:
        if self._token is None:
            body = self._call("POST", "/auth/token", {"username": USER, "password": self.password}, auth=False)
            self._token = body["access_token"]
        return self._token

    def __call__(self, method: str, path: str, body: Any = None) -> Any:
        return self._call(method, path, body)

    def _call(self, method: str, path: str, body: Any = None, *, auth: bool = True) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if auth:
            headers["Authorization"] = f"Bearer {self.token()}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise DevError(f"{method} {path}: HTTP {exc.code} {exc.read()[:2000].decode(errors='replace')}") from exc
        return json.loads(raw) if raw else None


def health(ui_url: str) -> dict[str, Any] | None:
    """`/api/v2/monitor/health` (no login needed), or None while the api-server does not answer."""
    try:
        with urllib.request.urlopen(f"{ui_url}/api/v2/monitor/health", timeout=5) as response:
            return json.loads(response.read())
    except (OSError, ValueError):
        return None


def _healthy(report: Mapping[str, Any] | None, names: Sequence[str]) -> bool:
    return bool(report) and all((report.get(n) or {}).get("status") == "healthy" for n in names)


# --- commands ----------------------------------------------------------------------------------

def ensure_database(db_url: str, *, reset: bool = False) -> None:
    """Create the metadata database on its server when it does not exist (`reset`: drop it first)."""
    import sqlalchemy as sa

    url = sa.engine.make_url(db_url)
    admin = sa.create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            if reset:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)')
            exists = conn.execute(sa.text("SELECT 1 FROM pg_database WHERE datname = :n"),
                                  {"n": url.database}).first()
            if not exists:
                conn.exec_driver_sql(f'CREATE DATABASE "{url.database}"')
    except sa.exc.OperationalError as exc:
        raise DevError(f"the metadata database server at {url.render_as_string()} is not reachable: {exc}") from exc
    finally:
        admin.dispose()


def ensure_broker(broker_url: str) -> None:
    """Fail now, by name, when the Celery broker (Redis) does not answer."""
    parts = urllib.parse.urlsplit(broker_url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=5) as s:
            s.sendall(b"PING\r\n")
            reply = s.recv(64)
    except OSError as exc:
        raise DevError(f"the Celery broker at {broker_url} is not reachable: {exc}") from exc
    if not reply.startswith((b"+PONG", b"-NOAUTH")):
        raise DevError(f"the Celery broker at {broker_url} did not answer PING like Redis: {reply!r}")


def cmd_up(args: argparse.Namespace) -> int:
    home = airflow_home()
    home.mkdir(parents=True, exist_ok=True)
    fresh = not state_path(home).exists()
    if not fresh:
        state = read_state(home)
        running = [n for n, pid in state["pids"].items() if alive(pid)]
        if running:
            raise DevError(f"a deployment is already up in {home} ({', '.join(running)}); "
                           "`bin/airflow-dev down` first")
    db_url = os.environ.get("AIRFLOW_DEV_DB_URL") or default_db_url(home)
    broker_url = os.environ.get("AIRFLOW_DEV_BROKER_URL") or DEFAULT_BROKER_URL
    ensure_database(db_url, reset=fresh and not os.environ.get("AIRFLOW_DEV_DB_URL"))
    if args.celery:
        ensure_broker(broker_url)
    ports = {name: free_port() for name in ("api-server", "log-server", "trigger-log-server")}
    keys = {"fernet_key": base64.urlsafe_b64encode(os.urandom(32)).decode(),
            "api_secret_key": secrets.token_hex(16), "jwt_secret": secrets.token_hex(32)}
    prefix = f"airflow-dev-{secrets.token_hex(4)}:"
    own_env = deployment_env(home, celery=args.celery, ports=ports, db_url=db_url, broker_url=broker_url,
                             secrets_=keys, prefix=prefix)
    env = {**os.environ, **own_env}
    password = secrets.token_urlsafe(12)
    passwords = home / "simple_auth_manager_passwords.json.generated"
    passwords.touch(mode=0o600)
    passwords.write_text(json.dumps({USER: password}) + "\n")
    started = time.monotonic()
    print(f"AIRFLOW_HOME={home}; migrating the metadata database ...", flush=True)
    run_airflow(env, ["db", "migrate"], what="the metadata database migration")
    ui_url = f"http://127.0.0.1:{ports['api-server']}"
    nli_queue = env["CITECHECK_NLI_QUEUE"]
    state: dict[str, Any] = {
        "executor": env["AIRFLOW__CORE__EXECUTOR"], "ui_url": ui_url, "user": USER, "password": password,
        "ports": ports, "pids": {}, "nli_queue": nli_queue, "home": str(home),
        "env": own_env,
    }
    write_state(home, state)
    try:
        for name, argv in components(args.celery, nli_queue).items():
            state["pids"][name] = start(home, name, argv, env)
        write_state(home, state)
        _setup_pool_and_connection(home, env)
        _wait_until_ready(state, home)
    except BaseException:
        _stop_all(state)
        write_state(home, {**state, "pids": {}})
        raise
    print(f"up in {time.monotonic() - started:.0f}s: {state['executor']}, "
          f"{', '.join(f'{n} (pid {p})' for n, p in state['pids'].items())}")
    print(f"UI and REST API: {ui_url}  (user {USER}, password in {passwords})")
    print(f"the DAG starts paused; unpause it before a run or a backfill (a paused DAG's backfill runs stay "
          f"queued): bin/airflow-dev airflow dags unpause {DAG_ID}")
    return 0


def _setup_pool_and_connection(home: Path, env: Mapping[str, str]) -> None:
    """The pool `nli` (without it the shards wait in `scheduled` forever) and the warehouse
    connection, both through the Airflow CLI, run side by side."""
    slots = os.environ.get("CITECHECK_NLI_POOL_SLOTS", "2")
    jobs = {"the pool nli": subprocess.Popen(
        airflow_cmd(["pools", "set", "nli", slots, "NLI judging (the judge_shard tasks)"]), env=dict(env),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)}
    conn = warehouse_connection(env.get("CITECHECK_WAREHOUSE_URL", ""))
    if conn is not None:
        path = home / "connections.json"
        path.touch(mode=0o600)
        path.write_text(json.dumps({env.get("CITECHECK_WAREHOUSE_CONN_ID", "citecheck_warehouse"): conn}))
        jobs["the connection citecheck_warehouse"] = subprocess.Popen(
            airflow_cmd(["connections", "import", "--overwrite", str(path)]), env=dict(env),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for what, job in jobs.items():
        output, _ = job.communicate(timeout=600)
        if job.returncode != 0:
            raise DevError(f"setting {what} failed (exit {job.returncode}):\n{output[-3000:]}")


def _wait_until_ready(state: Mapping[str, Any], home: Path) -> None:
    """Until the api-server answers, the scheduler, dag-processor (and triggerer) report healthy
    and the DAG is parsed without import errors; an error naming a process that died."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    api = Api(state)
    waiting = "the api-server"
    while time.monotonic() < deadline:
        dead = [n for n, pid in state["pids"].items() if not alive(pid)]
        if dead:
            raise DevError(f"{', '.join(dead)} exited during start-up; see {home / 'processes'}/"
                           f"{dead[0]}.log")
        report = health(state["ui_url"])
        if report is None:
            waiting = "the api-server"
        elif not _healthy(report, ("metadatabase", "scheduler", "dag_processor", "triggerer")):
            waiting = "healthy scheduler, dag-processor and triggerer: " + json.dumps(report)
        else:
            errors = api("GET", "/api/v2/importErrors")
            if errors.get("total_entries"):
                raise DevError("the DAG folder has import errors: " + json.dumps(errors["import_errors"])[:3000])
            try:
                api("GET", f"/api/v2/dags/{DAG_ID}")
                return
            except DevError:
                waiting = f"the DAG {DAG_ID} to be parsed"
        time.sleep(1)
    raise DevError(f"not ready after {READY_TIMEOUT_S:.0f}s, still waiting for {waiting}; "
                   f"process output in {home / 'processes'}")


def _stop_all(state: Mapping[str, Any]) -> list[str]:
    """Stop every process of the deployment: the workers first (a warm shutdown lets a running task
    finish and report to the api-server), then the rest together."""
    running = {name: pid for name, pid in state["pids"].items() if alive(pid)}
    workers = [pid for name, pid in running.items() if name.startswith("worker")]
    stop(workers)
    stop([pid for name, pid in running.items() if not name.startswith("worker")])
    return [f"{name} (pid {pid})" for name, pid in running.items()]


def cancel_backfills(state: Mapping[str, Any]) -> list[int]:
    """Cancel the deployment's backfills of the DAG that have not completed; their ids."""
    if health(state["ui_url"]) is None:
        return []
    api = Api(state)
    cancelled = []
    for backfill in (api("GET", f"/api/v2/backfills?dag_id={DAG_ID}&limit=100") or {}).get("backfills", []):
        if backfill.get("completed_at") is None:
            api("PUT", f"/api/v2/backfills/{backfill['id']}/cancel")
            cancelled.append(backfill["id"])
    return cancelled


def refuse_a_paused_backfill(state: Mapping[str, Any], args: Sequence[str]) -> None:
    """`airflow backfill create` of a paused DAG: a DevError saying so (its runs would stay queued)."""
    if list(args[:2]) != ["backfill", "create"]:
        return
    dag_id = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--dag-id", "-d")),
                  next((a.split("=", 1)[1] for a in args if a.startswith("--dag-id=")), None))
    if dag_id is None or health(state["ui_url"]) is None:
        return
    dag = Api(state)("GET", f"/api/v2/dags/{urllib.parse.quote(dag_id)}")
    if dag.get("is_paused"):
        raise DevError(f"the DAG {dag_id} is paused: a backfill's runs would stay queued for ever. Unpause it "
                       f"first: bin/airflow-dev airflow dags unpause {dag_id}")


def cmd_down(_args: argparse.Namespace) -> int:
    home = airflow_home()
    state = read_state(home)
    if cancelled := cancel_backfills(state):
        print("cancelled backfills: " + ", ".join(map(str, cancelled)))
    stopped = _stop_all(state)
    write_state(home, {**state, "pids": {}})
    print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
    return 0


def cmd_status(_args: argparse.Namespace) -> int:
    home = airflow_home()
    state = read_state(home)
    report = health(state["ui_url"])
    print(f"{state['executor']} deployment in {home}; UI {state['ui_url']} (user {state['user']})")
    for name, pid in state["pids"].items():
        print(f"  {name:<15} pid {pid:<8} {'running' if alive(pid) else 'NOT RUNNING'}")
    if report is None:
        print("  api-server does not answer")
    else:
        for part in ("metadatabase", "scheduler", "dag_processor", "triggerer"):
            print(f"  {part:<15} {(report.get(part) or {}).get('status', 'unknown')}")
    ok = report is not None and all(alive(p) for p in state["pids"].values()) and state["pids"]
    return 0 if ok else 1


def cmd_restart(args: argparse.Namespace) -> int:
    """Stop one component (if it still runs) and start it again with the same arguments."""
    home = airflow_home()
    state = read_state(home)
    procs = components(state["executor"] == "CeleryExecutor", state["nli_queue"])
    if args.component not in procs:
        raise DevError(f"no component {args.component!r}; one of {', '.join(procs)}")
    pid = state["pids"].get(args.component)
    if pid and alive(pid):
        stop([pid])
    env = {**os.environ, **state["env"]}
    state["pids"][args.component] = start(home, args.component, procs[args.component], env)
    write_state(home, state)
    print(f"{args.component} started (pid {state['pids'][args.component]})")
    return 0


def cmd_airflow(args: argparse.Namespace) -> int:
    state = read_state()
    refuse_a_paused_backfill(state, args.args)
    return subprocess.run(airflow_cmd(args.args), env={**os.environ, **state["env"]}).returncode


def cmd_api(args: argparse.Namespace) -> int:
    body = json.loads(args.body) if args.body else None
    print(json.dumps(Api(read_state())(args.method.upper(), args.path, body), indent=2))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bin/airflow-dev", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("up", help="start the deployment; returns once it is ready")
    p.add_argument("--celery", action="store_true", help="CeleryExecutor with a default and an NLI worker")
    p.set_defaults(func=cmd_up)
    sub.add_parser("status", help="the processes and their health").set_defaults(func=cmd_status)
    sub.add_parser("down", help="stop exactly the processes `up` started").set_defaults(func=cmd_down)
    p = sub.add_parser("restart", help="restart one component, e.g. worker-nli")
    p.add_argument("component")
    p.set_defaults(func=cmd_restart)
    p = sub.add_parser("api", help="call the REST API as admin, e.g. `api GET /api/v2/dags`")
    p.add_argument("method")
    p.add_argument("path")
    p.add_argument("body", nargs="?")
    p.set_defaults(func=cmd_api)
    p = sub.add_parser("airflow", help="run the Airflow CLI against the deployment", add_help=False)
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_airflow)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except DevError as exc:
        print(f"airflow-dev: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
