#!/usr/bin/env bash
# The compose stack's Superset: migrate its metadata DB, make sure the admin exists, import the
# dashboard bundle that `citecheck bi superset` wrote (service superset-bundle), serve on :8088.
set -euo pipefail
superset db upgrade
superset fab create-admin --username "${SUPERSET_ADMIN_USERNAME:-admin}" --firstname citecheck --lastname admin \
  --email admin@localhost --password "${SUPERSET_ADMIN_PASSWORD:?}" || true  # exists after the first start
superset init
superset import-directory "${CITECHECK_SUPERSET_BUNDLE:-/bundle/superset-bundle}" --overwrite
exec gunicorn -w "${SUPERSET_WORKERS:-2}" --threads 8 -b 0.0.0.0:8088 --timeout 120 "superset.app:create_app()"
