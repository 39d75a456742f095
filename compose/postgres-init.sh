#!/bin/sh
# Run once by the official postgres image at initdb (docker-entrypoint-initdb.d),
# over the local socket as the superuser: the roles (SCRAM verifiers only),
# the database and the grants, from the secret compose/secrets.sh made.
set -eu
psql -v ON_ERROR_STOP=1 -X -q --username "$POSTGRES_USER" --dbname postgres -f /run/secrets/postgres-init.sql
