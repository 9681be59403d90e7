"""What the DAG files share at run time: the warehouse of an Airflow task. Airflow is imported
inside the function, so the job package imports without it."""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy.engine import Engine

WAREHOUSE_CONN_ID = os.environ.get("CITECHECK_WAREHOUSE_CONN_ID", "citecheck_warehouse")


def task_warehouse(config: Any = None, conn_id: str = WAREHOUSE_CONN_ID) -> Engine:
    """The warehouse of a running task, initialised: the Airflow connection `conn_id` if it is
    defined, else CITECHECK_WAREHOUSE_URL; schemas from `config` (default: CITECHECK_CONFIG's)."""
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    from citecheck.warehouse import engine_for, init_warehouse

    try:
        url = BaseHook.get_connection(conn_id).get_uri()
    except AirflowNotFoundException:
        url = None
    engine = engine_for(config, url)
    init_warehouse(engine)
    return engine
