"""SQL names that come from configuration: the output schema, the source schema and the
read-only BI role. They cannot be bound parameters, so each one is validated against a strict
pattern when it is read, and quoted by the dialect wherever it reaches SQL.

Set them in the `[warehouse]` section of the config TOML (`schema`, `source_schema`, `bi_role`)
or with `CITECHECK_WAREHOUSE_SCHEMA`, `CITECHECK_SOURCE_SCHEMA`, `CITECHECK_BI_ROLE`, which win.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Dialect

from citecheck.core.config import check_keys, register_section

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_ENV = {"schema": "CITECHECK_WAREHOUSE_SCHEMA", "source_schema": "CITECHECK_SOURCE_SCHEMA",
        "bi_role": "CITECHECK_BI_ROLE"}
register_section("warehouse", _ENV)


class InvalidName(ValueError):
    """A configured SQL name is not a plain identifier."""


def identifier(value: Any, what: str) -> str:
    """`value` if it is a plain SQL identifier (letters, digits, `_`, at most 63), else an error."""
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        raise InvalidName(f"{what} must be a plain SQL identifier (letters, digits and _, not starting with a "
                         f"digit, at most 63 characters); got {value!r}")
    return value


def quoted(dialect: Dialect, name: str, what: str = "name") -> str:
    """The validated name, quoted for `dialect` (always quoted, so reserved words work too)."""
    return dialect.identifier_preparer.quote_identifier(identifier(name, what))


@dataclass(frozen=True)
class WarehouseNames:
    """Where the job's tables live. None means the connection's default schema."""

    schema: str | None = None
    source_schema: str | None = None
    bi_role: str = "citecheck_bi"

    def __post_init__(self) -> None:
        for key in ("schema", "source_schema", "bi_role"):
            value = getattr(self, key)
            if value is not None:
                identifier(value, f"warehouse.{key}")

    @property
    def search_path(self) -> tuple[str, ...]:
        """Schemas to resolve unqualified names in: outputs first, then the source schema."""
        return tuple(dict.fromkeys(s for s in (self.schema, self.source_schema) if s))


def warehouse_names(section: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
                    ) -> WarehouseNames:
    """Names from a config `[warehouse]` section, overridden by the environment; validated."""
    env = os.environ if env is None else env
    section = dict(section or {})
    check_keys("warehouse", section, _ENV, error=InvalidName)
    values = {key: env.get(var) or section.get(key) for key, var in _ENV.items()}
    values = {k: v for k, v in values.items() if v is not None}
    return WarehouseNames(**values)
