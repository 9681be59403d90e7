"""docker-compose.yml, Dockerfile and docker/ checked without a Docker engine (none runs here).

The compose file is parsed with PyYAML (which resolves anchors and `<<` merges as Compose does) and
its `${...}` references are interpolated the way Compose does, with the `.env` that
docker/make-env.sh writes, so the assertions read the values the containers would get. The
Postgres init script and `citecheck init-warehouse` run for real against the local PostgreSQL.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy.engine import make_url

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "Dockerfile"
MAKE_ENV = REPO / "docker" / "make-env.sh"
PG_INIT = REPO / "docker" / "postgres-init" / "10-citecheck-warehouse.sh"

AIRFLOW_SERVICES = {
    "airflow-init",
    "airflow-apiserver",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
    "airflow-worker",
    "airflow-worker-nli",
}
LONG_RUNNING = AIRFLOW_SERVICES - {"airflow-init"}
WORKERS = {"airflow-worker", "airflow-worker-nli", "airflow-worker-nli-gpu"}
NO_KEY_SERVICES = {"airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer"}
CODE_MOUNTS = {"dags", "plugins", "include"}
CODE_WITH_FILES = {"dags", "include"}  # plugins/ may be empty (Compose creates a missing mount source)
BUILT_IMAGES = {"citecheck-airflow", "citecheck-superset"}
SUPERSET_DIR = REPO / "superset"
SECRET_NAME = re.compile(r"PASSWORD|SECRET|FERNET|API_KEY|TOKEN", re.IGNORECASE)
REFERENCE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


class MissingVariable(KeyError):
    """A `${NAME:?message}` reference whose variable is unset, as Compose reports it."""


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """Compose's interpolation: `${X}`, `${X:-default}`, `${X-default}`, `${X:?err}`, `$$` → `$`."""
    if isinstance(value, Mapping):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def one(match: re.Match[str]) -> str:
        name, op, arg = match["name"], match["op"], match["arg"] or ""
        current = env.get(name)
        unset = current is None or (op is not None and op.startswith(":") and current == "")
        if op in (":?", "?") and unset:
            raise MissingVariable(f"{name}: {arg}")
        if op in (":-", "-") and unset:
            return arg
        return current or ""

    parts = value.split("$$")
    return "$".join(REFERENCE.sub(one, part) for part in parts)


def load_compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def generated_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The variables docker/make-env.sh writes (what a user's .env holds after set-up)."""
    path = tmp_path_factory.mktemp("env") / ".env"
    subprocess.run(["bash", str(MAKE_ENV), str(path)], check=True, capture_output=True, text=True)
    env: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, val = line.partition("=")
            env[key] = val
    return env


@pytest.fixture(scope="module")
def compose(generated_env: dict[str, str]) -> dict[str, Any]:
    """The compose file as the containers would see it with the generated .env."""
    return interpolate(load_compose(), generated_env)


def services(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return doc["services"]


def environment(service: Mapping[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def command_args(service: Mapping[str, Any]) -> list[str]:
    command = service.get("command", [])
    return shlex.split(command) if isinstance(command, str) else list(command)


def option_values(args: list[str], *flags: str) -> list[str]:
    """Values of a command-line option given as `--flag value` or `--flag=value`."""
    values = []
    for i, arg in enumerate(args):
        if arg in flags and i + 1 < len(args):
            values.append(args[i + 1])
        for flag in flags:
            if arg.startswith(flag + "="):
                values.append(arg.split("=", 1)[1])
    return values


def queues_of(service: Mapping[str, Any]) -> set[str]:
    values = option_values(command_args(service), "--queues", "-q")
    return {q.strip() for value in values for q in value.split(",") if q.strip()}


def image_tag(image: str) -> tuple[str, str | None]:
    name, sep, tag = image.rpartition(":")
    if not sep or "/" in tag:
        return image, None
    return name, tag


def pinned_requirement(name: str) -> str:
    for line in (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines():
        match = re.match(rf"^{re.escape(name)}(?:\[[^\]]*\])?==([^\s;#]+)", line.strip(), re.IGNORECASE)
        if match:
            return match.group(1)
    raise AssertionError(f"{name} is not pinned with == in requirements.txt")


def project_version() -> str:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


# --- services and images --------------------------------------------------------------------


def test_every_service_of_the_stack_is_defined(compose: dict[str, Any]) -> None:
    expected = {"postgres", "redis", *AIRFLOW_SERVICES, "airflow-worker-nli-gpu"}
    missing = expected - set(services(compose))
    assert not missing, f"docker-compose.yml lacks services {sorted(missing)}"
    commands = {name: command_args(services(compose)[name])[:2] for name in LONG_RUNNING}
    assert commands == {
        "airflow-apiserver": ["api-server"],
        "airflow-scheduler": ["scheduler"],
        "airflow-dag-processor": ["dag-processor"],
        "airflow-triggerer": ["triggerer"],
        "airflow-worker": ["celery", "worker"],
        "airflow-worker-nli": ["celery", "worker"],
    }


def test_every_image_is_pinned_to_a_version_tag(compose: dict[str, Any]) -> None:
    for name, service in services(compose).items():
        assert "image" in service, f"{name}: no image (a built service needs a tagged image name too)"
        repo, tag = image_tag(service["image"])
        assert tag, f"{name}: image {service['image']!r} has no tag"
        assert tag != "latest" and tag[0].isdigit(), (
            f"{name}: image {service['image']!r} is not a version tag"
        )
        if "build" in service:
            assert repo in BUILT_IMAGES, f"{name}: built image should be named one of {sorted(BUILT_IMAGES)}"
            assert tag.split("-")[0] == project_version(), (
                f"{name}: local image tag should be the project version"
            )
    assert services(compose)["postgres"]["image"] == "postgres:16"
    assert image_tag(services(compose)["redis"]["image"])[1].startswith("7.2")


def test_dockerfile_base_image_matches_the_pinned_airflow_and_python() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    bases = re.findall(r"^FROM\s+(\S+)", text, re.MULTILINE)
    assert bases, "Dockerfile has no FROM line"
    for base in bases:
        assert "$" not in base and image_tag(base)[1], f"base image {base!r} is not a literal pinned tag"
    match = re.fullmatch(r"apache/airflow:(?P<airflow>\d+\.\d+\.\d+)-python(?P<python>\d+\.\d+)", bases[-1])
    assert match, f"final base image {bases[-1]!r} should be apache/airflow:X.Y.Z-pythonA.B"
    assert match["airflow"] == pinned_requirement("apache-airflow")
    floor = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    assert floor == f">={match['python']}", "image Python should be the project's minimum Python"


def test_dockerfile_installs_cpu_torch_before_the_requirements() -> None:
    runs = " ".join(re.findall(r"^RUN\s+(.*?)(?<!\\)$", DOCKERFILE.read_text(), re.MULTILINE | re.DOTALL))
    torch = re.search(r"pip install[^&]*?\"?torch==(?P<version>[^\"\s]+)\"?[^&]*--index-url", runs)
    assert torch, "torch must be installed from an explicit index (PyPI's Linux wheel is the CUDA build)"
    assert torch["version"] == pinned_requirement("torch")
    requirements = re.search(r"\s-r\s", runs)
    assert requirements and requirements.start() > torch.start(), (
        "torch must come first so `-r requirements.txt` keeps the CPU build"
    )
    args = re.search(r"ARG TORCH_INDEX_URL=(\S+)", DOCKERFILE.read_text())
    assert args and args.group(1).endswith("/whl/cpu")
    assert services(load_compose())["airflow-worker"]["build"]["args"]["TORCH_INDEX_URL"] == args.group(1)


def test_build_context_sends_only_what_the_dockerfile_copies() -> None:
    """The context is the repo root: .venv (GBs), .git and .env must stay out of the builder."""
    copied = {m.split()[-2] for m in re.findall(r"^COPY\s+(.+)$", DOCKERFILE.read_text(), re.MULTILINE)}
    rules = [
        r.strip() for r in (REPO / ".dockerignore").read_text().splitlines() if r.strip() and r[0] != "#"
    ]
    assert rules[0] == "*", "ignore everything by default"
    assert {r.removeprefix("!") for r in rules[1:]} == copied


# --- executor, queues, shared settings -------------------------------------------------------


def test_celery_executor_and_shared_secrets_everywhere(compose: dict[str, Any]) -> None:
    raw = COMPOSE.read_text(encoding="utf-8")
    assert "&airflow-common-env" in raw, "the shared Airflow environment should be one anchor"
    common = {k: str(v) for k, v in compose["x-airflow-common-env"].items()}
    assert common["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor"
    assert common["AIRFLOW__CORE__LOAD_EXAMPLES"] == "false"
    airflow = {
        n: s for n, s in services(compose).items() if s.get("image", "").startswith("citecheck-airflow")
    }
    assert set(airflow) >= AIRFLOW_SERVICES
    for name, service in airflow.items():
        env = environment(service)
        differing = {k for k, v in common.items() if env.get(k) != v}
        assert not differing, f"{name}: differs from the shared Airflow environment in {sorted(differing)}"
    for key in ("AIRFLOW__CORE__FERNET_KEY", "AIRFLOW__API__SECRET_KEY", "AIRFLOW__API_AUTH__JWT_SECRET"):
        assert common[key], f"{key} must be set (and shared) for the components to trust each other"


def test_metadata_broker_and_execution_api_point_at_the_stack(compose: dict[str, Any]) -> None:
    common = compose["x-airflow-common-env"]
    names = set(services(compose))
    meta = make_url(common["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
    assert (meta.drivername, meta.host, meta.database) == ("postgresql+psycopg", "postgres", "airflow")
    backend = common["AIRFLOW__CELERY__RESULT_BACKEND"]
    assert backend.startswith("db+") and make_url(backend[3:]).host == "postgres"
    broker = make_url(common["AIRFLOW__CELERY__BROKER_URL"])
    assert broker.drivername == "redis" and broker.host in names
    api_url = common["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"]
    api = re.fullmatch(r"http://(?P<host>[\w-]+):(?P<port>\d+)/execution/", api_url)
    assert api and api["host"] == "airflow-apiserver" and api["host"] in names
    assert any(p.endswith(f":{api['port']}") for p in services(compose)["airflow-apiserver"]["ports"])


def test_async_metadata_url_and_visibility_timeout(compose: dict[str, Any]) -> None:
    """Issue 14: the asyncpg twin of the metadata URL is set, and Redis never hands a running task
    to a second worker: the visibility timeout outlasts the DAG's longest execution_timeout."""
    import datetime as dt

    common = compose["x-airflow-common-env"]
    sync, async_ = make_url(common["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]), make_url(
        common["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"])
    assert async_.drivername == "postgresql+asyncpg"
    assert async_.set(drivername=sync.drivername) == sync
    timeouts = [
        dt.timedelta(**{k.arg: k.value.value for k in node.keywords})
        for node in ast.walk(_dag_module())
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "dt.timedelta"
        and all(isinstance(k.value, ast.Constant) for k in node.keywords)
    ]
    assert timeouts and max(timeouts) >= dt.timedelta(hours=25)
    visibility = int(common["AIRFLOW__CELERY_BROKER_TRANSPORT_OPTIONS__VISIBILITY_TIMEOUT"])
    assert visibility > max(timeouts).total_seconds()


def test_nli_worker_alone_listens_on_the_nli_queue(compose: dict[str, Any]) -> None:
    svc = services(compose)
    nli_queue = compose["x-airflow-common-env"]["CITECHECK_NLI_QUEUE"]
    assert nli_queue == "nli"
    assert queues_of(svc["airflow-worker-nli"]) == {"nli"}
    assert queues_of(svc["airflow-worker-nli-gpu"]) == {"nli"}
    default = queues_of(svc["airflow-worker"])
    assert "nli" not in default, "the default worker must leave NLI shards to the nli workers"
    assert default == {compose["x-airflow-common-env"]["AIRFLOW__OPERATORS__DEFAULT_QUEUE"]}
    concurrency = option_values(command_args(svc["airflow-worker-nli"]), "--concurrency", "-c")
    assert concurrency and int(concurrency[0]) >= 1


def test_gpu_nli_worker_is_optional_and_reserves_an_nvidia_gpu(compose: dict[str, Any]) -> None:
    svc = services(compose)
    gpu = svc["airflow-worker-nli-gpu"]
    assert gpu["profiles"] == ["gpu"], "a GPU worker must not start on hosts without one"
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert any(d["driver"] == "nvidia" and "gpu" in d["capabilities"] for d in devices)
    assert (
        gpu["build"]["args"]["TORCH_INDEX_URL"]
        != svc["airflow-worker-nli"]["build"]["args"]["TORCH_INDEX_URL"]
    )
    assert gpu["image"] != svc["airflow-worker-nli"]["image"], "the CUDA image must not overwrite the CPU one"
    for name in set(svc) - {"airflow-worker-nli-gpu"}:
        assert "deploy" not in svc[name] or "devices" not in str(svc[name]["deploy"]), f"{name} needs no GPU"


# --- mounts and product settings ---------------------------------------------------------------


def test_code_folders_are_mounted_into_opt_airflow(compose: dict[str, Any]) -> None:
    for folder in CODE_WITH_FILES:
        assert any((REPO / folder).iterdir()), f"./{folder} is mounted but holds nothing"
    for name, service in services(compose).items():
        if not service.get("image", "").startswith("citecheck-airflow"):
            continue
        mounts = {}
        for volume in service["volumes"]:
            source, target = volume.split(":")[:2]
            mounts[target] = source
        for folder in CODE_MOUNTS:
            assert mounts.get(f"/opt/airflow/{folder}") == f"./{folder}", f"{name}: ./{folder} not mounted"
        env = environment(service)
        assert "/opt/airflow/include" in env["PYTHONPATH"].split(":")
        assert mounts.get(env["HF_HOME"]) in compose["volumes"], f"{name}: HF_HOME must be a named volume"


def test_judge_file_default_is_a_mounted_valid_nli_judge(compose: dict[str, Any]) -> None:
    from citecheck.judges import nli

    service = services(compose)["airflow-worker-nli"]
    judge_path = environment(service)["CITECHECK_JUDGE"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in service["volumes"]}
    target = next(t for t in mounts if judge_path.startswith(t + "/"))
    host_file = REPO / mounts[target] / Path(judge_path).relative_to(target)
    settings = nli.parse_spec(json.loads(host_file.read_text(encoding="utf-8")))
    assert settings.model == nli.DEFAULT_MODEL


def test_bundled_cascade_judge_uses_message_batches_with_a_budget() -> None:
    from citecheck.judges import llm, nli

    spec = json.loads((REPO / "docker" / "judges" / "cascade.json").read_text(encoding="utf-8"))
    assert spec["kind"] == "cascade"
    nli.parse_spec(spec["first"])
    escalate = {k: v for k, v in spec["escalate"].items() if k not in ("sample_rate", "salt")}
    config = llm.config_from_spec(escalate)
    assert config.transport == "batches" and config.budget_usd and config.budget_usd > 0


def test_anthropic_key_comes_from_the_environment_and_only_reaches_task_runners() -> None:
    raw = COMPOSE.read_text(encoding="utf-8")
    doc = load_compose()
    for name in WORKERS | {"airflow-cli"}:
        assert environment(services(doc)[name]).get("ANTHROPIC_API_KEY") == "${ANTHROPIC_API_KEY:-}", name
    for name in NO_KEY_SERVICES:
        assert "ANTHROPIC_API_KEY" not in environment(services(doc)[name]), f"{name} needs no Anthropic key"
    assert not re.search(r"sk-ant-[A-Za-z0-9_-]+", raw), "an Anthropic key literal is in docker-compose.yml"
    with_key = interpolate(doc, {"ANTHROPIC_API_KEY": "sk-ant-test", **_required_dummies()})
    assert environment(services(with_key)["airflow-worker-nli"])["ANTHROPIC_API_KEY"] == "sk-ant-test"


def _required_dummies() -> dict[str, str]:
    names = {m["name"] for m in REFERENCE.finditer(COMPOSE.read_text()) if m["op"] in (":?", "?")}
    return {name: "x" for name in names}


def test_no_secret_literal_in_the_file() -> None:
    doc = load_compose()
    checked = 0
    for name, service in services(doc).items():
        for key, value in environment(service).items():
            if SECRET_NAME.search(key):
                ref = REFERENCE.fullmatch(value)
                assert ref, f"{name}: {key} must be a ${{VARIABLE}} reference, not a literal"
                assert ref["op"] in (None, ":?", "?") or ref["arg"] == "", (
                    f"{name}: {key} has a default secret"
                )
                checked += 1
    assert checked >= 5
    # Every password inside a URL is a required variable: with each one set to a marker, every URL
    # carrying credentials carries exactly that marker.
    marked = interpolate(doc, {name: "FROM-ENV" for name in _required_dummies()})
    urls = [make_url(v.removeprefix("db+")) for v in _strings(marked) if re.match(r"^[\w+]+://", v)]
    with_password = [u for u in urls if u.password is not None]
    assert len(with_password) >= 3
    literal = [u.render_as_string(hide_password=False) for u in with_password if u.password != "FROM-ENV"]
    assert not literal, f"URL passwords must come from required variables: {literal}"


def _strings(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_warehouse_connection_is_the_second_postgres_database(compose: dict[str, Any]) -> None:
    env = environment(services(compose)["airflow-worker"])
    url = make_url(env["AIRFLOW_CONN_CITECHECK_WAREHOUSE"])
    assert (url.drivername, url.host, url.port, url.database) == (
        "postgresql+psycopg",
        "postgres",
        5432,
        "warehouse",
    )
    assert env["CITECHECK_WAREHOUSE_URL"] == env["AIRFLOW_CONN_CITECHECK_WAREHOUSE"]
    pg = services(compose)["postgres"]
    pg_env = environment(pg)
    assert (pg_env["CITECHECK_WAREHOUSE_USER"], pg_env["CITECHECK_WAREHOUSE_DB"]) == (
        url.username,
        url.database,
    )
    assert pg_env["CITECHECK_WAREHOUSE_PASSWORD"] == url.password
    assert "./docker/postgres-init:/docker-entrypoint-initdb.d:ro" in pg["volumes"]
    assert PG_INIT.is_file() and os.access(PG_INIT, os.X_OK)


def test_airflow_resolves_the_connection_from_the_environment(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    """What the DAG does in a task: the env var becomes connection `citecheck_warehouse`, same URL.

    In a subprocess with its own AIRFLOW_HOME, so this test leaves no Airflow config behind.
    """
    uri = environment(services(compose)["airflow-worker"])["AIRFLOW_CONN_CITECHECK_WAREHOUSE"]
    code = "from airflow.sdk import BaseHook; print(BaseHook.get_connection('citecheck_warehouse').get_uri())"
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path), "AIRFLOW_CONN_CITECHECK_WAREHOUSE": uri}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert make_url(done.stdout.strip().splitlines()[-1]) == make_url(uri)


def _dag_module() -> ast.Module:
    return ast.parse((REPO / "dags" / "citation_metrics_daily.py").read_text(encoding="utf-8"))


def _env_lookup(node: ast.expr) -> tuple[str, Any] | None:
    """(NAME, default) of `os.environ.get("NAME", default)` / `os.getenv(...)`, else None."""
    if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
        return None
    func = ast.unparse(node.func)
    if func not in ("os.environ.get", "os.getenv", "environ.get", "getenv"):
        return None
    default = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else None
    return node.args[0].value, default


def _resolve(module: ast.Module, node: ast.expr, env: Mapping[str, str]) -> Any:
    """The value a DAG-file expression takes under `env`: a constant, a module-level name, an env lookup."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        for stmt in module.body:
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == node.id for t in stmt.targets
            ):
                return _resolve(module, stmt.value, env)
        raise AssertionError(f"{node.id} is not a module-level constant of the DAG file")
    lookup = _env_lookup(node)
    if lookup:
        name, default = lookup
        return env.get(name, default)
    raise AssertionError(f"cannot read {ast.unparse(node)} statically")


def test_the_dag_sends_nli_shards_to_the_nli_queue_and_pool(compose: dict[str, Any]) -> None:
    """The queue is fixed when the dag-processor parses the DAG file, so its environment decides it."""
    svc = services(compose)
    module = _dag_module()
    parser_env = environment(svc["airflow-dag-processor"])
    routed = []
    for call in ast.walk(module):
        if isinstance(call, ast.Call) and ast.unparse(call.func) in ("task", "task.python"):
            keywords = {k.arg: k.value for k in call.keywords}
            if "pool" in keywords:
                routed.append(
                    (
                        _resolve(module, keywords["pool"], parser_env),
                        _resolve(module, keywords["queue"], parser_env),
                    )
                )
    assert routed, "no task in the DAG uses a pool"
    script = command_args(svc["airflow-init"])[-1]
    created = {
        shlex.split(line)[3] for line in script.splitlines() if line.strip().startswith("airflow pools set")
    }
    nli_queues = queues_of(svc["airflow-worker-nli"])
    for pool, queue in routed:
        assert pool in created, f"the DAG uses pool {pool!r}, which airflow-init does not create"
        assert queue in nli_queues, (
            f"the DAG routes pool {pool!r} to queue {queue!r}; the nli worker serves {nli_queues}"
        )


def test_the_dag_reads_the_connection_the_compose_file_defines(compose: dict[str, Any]) -> None:
    # the DAGs' connection ids are read once, in their Airflow glue (citecheck.job.airflow)
    module = ast.parse((REPO / "include" / "citecheck" / "job" / "airflow.py").read_text(encoding="utf-8"))
    env = environment(services(compose)["airflow-worker"])
    lookups = [found for node in ast.walk(module) if (found := _env_lookup(node))]
    conn_ids = [default for name, default in lookups if name.endswith("WAREHOUSE_CONN_ID")]
    assert conn_ids, "the DAGs' glue should read its warehouse connection id from the environment"
    for conn_id in conn_ids:  # the Anthropic connection is optional: compose passes ANTHROPIC_API_KEY
        assert f"AIRFLOW_CONN_{conn_id.upper()}" in env, (
            f"no AIRFLOW_CONN_ variable for connection {conn_id!r}"
        )


# --- health and start order -----------------------------------------------------------------------


def test_postgres_and_redis_have_healthchecks(compose: dict[str, Any]) -> None:
    svc = services(compose)
    assert "pg_isready" in svc["postgres"]["healthcheck"]["test"]
    assert "-h" in svc["postgres"]["healthcheck"]["test"], (
        "check over TCP, which is up only after init scripts"
    )
    assert svc["redis"]["healthcheck"]["test"][-2:] == ["redis-cli", "ping"]
    for name in LONG_RUNNING:
        assert svc[name].get("healthcheck", {}).get("test"), f"{name} has no healthcheck"


def test_init_runs_first_and_everything_waits_for_it(compose: dict[str, Any]) -> None:
    svc = services(compose)
    init_deps = svc["airflow-init"]["depends_on"]
    assert {k: v["condition"] for k, v in init_deps.items()} == {
        "postgres": "service_healthy",
        "redis": "service_healthy",
    }
    for name in LONG_RUNNING | {"airflow-worker-nli-gpu", "flower"}:
        deps = svc[name]["depends_on"]
        assert deps["airflow-init"]["condition"] == "service_completed_successfully", name
        assert deps["postgres"]["condition"] == "service_healthy", name
    for name in WORKERS:
        assert svc[name]["depends_on"]["airflow-apiserver"]["condition"] == "service_healthy", name


def test_init_migrates_creates_the_admin_the_nli_pool_and_the_warehouse(compose: dict[str, Any]) -> None:
    init = services(compose)["airflow-init"]
    env = environment(init)
    assert env["_AIRFLOW_DB_MIGRATE"] == "true" and env["_AIRFLOW_WWW_USER_CREATE"] == "true"
    assert env["_AIRFLOW_WWW_USER_PASSWORD"], "the admin password comes from .env"
    script = command_args(init)[-1]
    lines = [
        shlex.split(line) for line in script.splitlines() if line.strip() and not line.strip().startswith("#")
    ]
    assert ["/entrypoint", "airflow", "version"] in lines, (
        "the entrypoint must run (it migrates the database)"
    )
    pool = next(line for line in lines if line[:3] == ["airflow", "pools", "set"])
    assert pool[3] == "nli" and int(pool[4]) >= 1 and pool[5] == "NLI judging"
    assert ["python", "-m", "citecheck", "init-warehouse"] in lines


def test_cli_offers_the_init_warehouse_command_that_init_runs() -> None:
    from citecheck.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["init-warehouse", "--help"])
    assert exit_info.value.code == 0


# --- the .env generator and the Postgres init script -------------------------------------------------


def test_make_env_provides_every_required_variable(generated_env: dict[str, str], tmp_path: Path) -> None:
    from cryptography.fernet import Fernet

    doc = load_compose()
    interpolate(doc, generated_env)  # raises MissingVariable for anything the .env lacks
    with pytest.raises(MissingVariable):
        interpolate(doc, {})
    Fernet(generated_env["AIRFLOW_FERNET_KEY"].encode())
    for key in ("AIRFLOW_DB_PASSWORD", "CITECHECK_WAREHOUSE_PASSWORD", "AIRFLOW_JWT_SECRET"):
        assert re.fullmatch(r"[0-9a-f]{32,}", generated_env[key]), f"{key} should be URL-safe random hex"
    assert generated_env["ANTHROPIC_API_KEY"] == ""
    existing = tmp_path / ".env"
    existing.write_text("KEEP=1\n")
    result = subprocess.run(["bash", str(MAKE_ENV), str(existing)], capture_output=True, text=True)
    assert result.returncode != 0 and existing.read_text() == "KEEP=1\n"


def test_postgres_init_script_creates_a_warehouse_the_job_can_initialise(pg_url: str) -> None:
    import sqlalchemy as sa

    admin = make_url(pg_url)
    suffix = uuid.uuid4().hex[:8]
    role, database = f"cc_wh_{suffix}", f"cc-warehouse-{suffix}"
    env = {
        **os.environ,
        "PGHOST": admin.host or "127.0.0.1",
        "PGPORT": str(admin.port or 5432),
        "POSTGRES_USER": admin.username or "postgres",
        "POSTGRES_DB": admin.database or "postgres",
        "CITECHECK_WAREHOUSE_USER": role,
        "CITECHECK_WAREHOUSE_PASSWORD": "it's a p@ss",
        "CITECHECK_WAREHOUSE_DB": database,
    }
    engine = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
    try:
        for _ in range(2):  # a second run finds both and changes nothing
            done = subprocess.run(["bash", str(PG_INIT)], env=env, capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
        with engine.connect() as conn:
            owner = conn.execute(
                sa.text("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = :d"), {"d": database}
            ).scalar()
            has_password = conn.execute(
                sa.text("SELECT rolpassword IS NOT NULL FROM pg_authid WHERE rolname = :r"), {"r": role}
            ).scalar()
        assert owner == role and has_password
        warehouse = admin.set(username=role, password=None, database=database).render_as_string(
            hide_password=False
        )
        cli = subprocess.run(
            [sys.executable, "-m", "citecheck", "init-warehouse"],
            env={**os.environ, "CITECHECK_WAREHOUSE_URL": warehouse, "PYTHONPATH": str(REPO / "include")},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert cli.returncode == 0, cli.stderr
        check = sa.create_engine(warehouse)
        try:
            tables = set(sa.inspect(check).get_table_names())
        finally:
            check.dispose()
        assert {"daily_metrics", "runs", "judgment_cache"} <= tables
    finally:
        with engine.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
            conn.execute(sa.text(f'DROP ROLE IF EXISTS "{role}"'))
        engine.dispose()


def _compose_cli() -> list[str] | None:
    """A Docker Compose v2 client (`docker compose` or `docker-compose`); `config` needs no engine."""
    for candidate in (["docker", "compose"], ["docker-compose"]):
        if shutil.which(candidate[0]) is None:
            continue
        probe = subprocess.run([*candidate, "version", "--short"], capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip().lstrip("v").startswith("2"):
            return candidate
    return None


def test_docker_compose_itself_accepts_the_file(generated_env: dict[str, str], tmp_path: Path) -> None:
    """Compose's own parser and schema, where a Compose v2 client is installed (none is by default here)."""
    cli = _compose_cli()
    if cli is None:
        pytest.skip("no Docker Compose v2 client on PATH; the parsing tests above cover the file")
    env_file = tmp_path / ".env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in generated_env.items()))
    base = [*cli, "-f", str(COMPOSE), "--env-file", str(env_file)]
    empty = tmp_path / "empty.env"
    empty.write_text("")
    bare_env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "CITECHECK"))}
    missing = subprocess.run(
        [*cli, "-f", str(COMPOSE), "--env-file", str(empty), "config", "-q"],
        capture_output=True,
        text=True,
        env=bare_env,
    )
    assert missing.returncode != 0 and "make-env.sh" in missing.stderr
    done = subprocess.run(
        [*base, "--profile", "gpu", "--profile", "cli", "--profile", "flower", "config"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    rendered = yaml.safe_load(done.stdout)["services"]
    assert rendered["airflow-worker-nli"]["command"][:4] == ["celery", "worker", "--queues", "nli"]
    assert (
        rendered["airflow-worker-nli-gpu"]["deploy"]["resources"]["reservations"]["devices"][0]["driver"]
        == "nvidia"
    )


# --- the optional Superset profile ------------------------------------------------------------


def test_superset_profile_is_optional_and_serves_the_generated_bundle(compose: dict[str, Any]) -> None:
    bundle, superset = services(compose)["superset-bundle"], services(compose)["superset"]
    assert bundle["profiles"] == ["superset"] and superset["profiles"] == ["superset"], (
        "Superset must not start without `--profile superset`")
    # The bundle is written by the citecheck CLI in the Airflow image, from the stack's warehouse URL.
    assert bundle["image"].startswith("citecheck-airflow:")
    script = " ".join(command_args(bundle))
    assert "citecheck bi superset" in script and "--out /opt/airflow/data/superset-bundle" in script
    assert "CITECHECK_WAREHOUSE_URL" in script and environment(bundle)["CITECHECK_WAREHOUSE_URL"]
    assert superset["depends_on"]["superset-bundle"]["condition"] == "service_completed_successfully"
    assert superset["depends_on"]["postgres"]["condition"] == "service_healthy"
    # Superset reads that bundle from the shared volume and imports it on start.
    mounts = dict(v.split(":")[:2][::-1] for v in superset["volumes"])
    assert mounts["/bundle"] == "citecheck-data" and "citecheck-data:/bundle:ro" in superset["volumes"]
    assert environment(superset)["CITECHECK_SUPERSET_BUNDLE"] == "/bundle/superset-bundle"
    start = (SUPERSET_DIR / "start.sh").read_text(encoding="utf-8")
    assert 'superset import-directory "${CITECHECK_SUPERSET_BUNDLE' in start
    assert start.index("db upgrade") < start.index("fab create-admin") < start.index("import-directory") < start.index(
        "gunicorn")
    assert all(str(p).startswith("127.0.0.1:") for p in superset["ports"]), "published on this machine only"
    assert superset["build"]["context"] == "./superset"
    assert "superset-home" in compose["volumes"]


def test_superset_image_installs_the_pinned_superset_requirements() -> None:
    dockerfile = (SUPERSET_DIR / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.11-slim", dockerfile, re.MULTILINE)
    assert "pip install --no-cache-dir -r /app/requirements.txt" in dockerfile
    pins = [line for line in (SUPERSET_DIR / "requirements.txt").read_text().splitlines()
            if line and not line.startswith("#")]
    assert all("==" in line for line in pins) and any(line.startswith("apache-superset==") for line in pins)
    config = (SUPERSET_DIR / "superset_config.py").read_text(encoding="utf-8")
    assert 'os.environ["SUPERSET_SECRET_KEY"]' in config


def test_superset_secrets_come_from_make_env(compose: dict[str, Any], generated_env: dict[str, str]) -> None:
    env = environment(services(compose)["superset"])
    assert env["SUPERSET_SECRET_KEY"] == generated_env["SUPERSET_SECRET_KEY"] and len(env["SUPERSET_SECRET_KEY"]) >= 32
    assert env["SUPERSET_ADMIN_PASSWORD"] == generated_env["SUPERSET_ADMIN_PASSWORD"]
