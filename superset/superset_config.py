"""Superset's config in the compose stack: secrets from the environment (docker/make-env.sh writes
them to .env), its own metadata database in the superset-home volume. The bundle `citecheck bi
superset` writes holds no warehouse password: Superset reads it from CITECHECK_WAREHOUSE_PASSWORD
when it connects (the password store below serves every database of this Superset)."""

import os

SECRET_KEY = os.environ["SUPERSET_SECRET_KEY"]
SQLALCHEMY_DATABASE_URI = "sqlite:////app/superset_home/superset.db"


def warehouse_password(url):  # Superset calls it with the database's sqlalchemy URL
    """The password of Superset's database connections: CITECHECK_WAREHOUSE_PASSWORD; unset, none is
    passed and libpq falls back to PGPASSWORD or ~/.pgpass."""
    return os.environ.get("CITECHECK_WAREHOUSE_PASSWORD") or None


SQLALCHEMY_CUSTOM_PASSWORD_STORE = warehouse_password
