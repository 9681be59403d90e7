"""The one SQLAlchemy `MetaData` every table of the product is defined on (no DDL written twice)."""

from __future__ import annotations

from sqlalchemy import MetaData

metadata = MetaData()
