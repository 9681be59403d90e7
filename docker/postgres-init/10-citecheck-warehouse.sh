#!/usr/bin/env bash
# Create the citation warehouse next to Airflow's metadata database: one role and one database.
#
# The postgres image runs this once, on the first start with an empty data volume (files in
# /docker-entrypoint-initdb.d). Names and password come from the service's environment; psql
# variables quote them (:"name" as an identifier, :'pw' as a literal), so no value is pasted into SQL.
# Running it again is harmless: the role and database are only created when missing.
set -euo pipefail

: "${CITECHECK_WAREHOUSE_USER:?set CITECHECK_WAREHOUSE_USER}"
: "${CITECHECK_WAREHOUSE_PASSWORD:?set CITECHECK_WAREHOUSE_PASSWORD}"
: "${CITECHECK_WAREHOUSE_DB:?set CITECHECK_WAREHOUSE_DB}"

psql -v ON_ERROR_STOP=1 --no-psqlrc \
  --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" \
  -v wh_user="$CITECHECK_WAREHOUSE_USER" \
  -v wh_password="$CITECHECK_WAREHOUSE_PASSWORD" \
  -v wh_db="$CITECHECK_WAREHOUSE_DB" <<'SQL'
SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'wh_user', :'wh_password')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'wh_user')
\gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'wh_db', :'wh_user')
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'wh_db')
\gexec
REVOKE ALL ON DATABASE :"wh_db" FROM PUBLIC;
GRANT ALL PRIVILEGES ON DATABASE :"wh_db" TO :"wh_user";
SQL
