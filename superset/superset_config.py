"""Superset's config in the compose stack: secrets from the environment (docker/make-env.sh writes
them to .env), its own metadata database in the superset-home volume."""

import os

SECRET_KEY = os.environ["SUPERSET_SECRET_KEY"]
SQLALCHEMY_DATABASE_URI = "sqlite:////app/superset_home/superset.db"
