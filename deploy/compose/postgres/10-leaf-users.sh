#!/bin/bash
# Run once by the PostgreSQL image on an empty data directory (docker-entrypoint-initdb.d):
# the two accounts of docs/operations.md ("Least privilege"), as for MariaDB
# (../10-leaf-users.sh):
#   - the migrator owns the Leaf database, hence its public schema (PostgreSQL 15+): it
#     creates leaf_alloc and its trigger, used only by the one-shot migrate job;
#   - the service: CONNECT and USAGE only. grant-app.sh (the db-grants job) gives it
#     SELECT, INSERT, UPDATE on leaf_alloc after the migration.
# The SQL between <<SQL and SQL is also run by test/migrate.e2e-spec.ts.
set -eo pipefail
psql -v ON_ERROR_STOP=1 -U "${POSTGRES_USER:?}" -d "${POSTGRES_DB:?}" <<SQL
CREATE ROLE ${LEAF_MIGRATOR_USER:?} LOGIN PASSWORD '${LEAF_MIGRATOR_PASSWORD:?}';
CREATE ROLE ${LEAF_APP_USER:?} LOGIN PASSWORD '${LEAF_APP_PASSWORD:?}';
ALTER DATABASE ${POSTGRES_DB:?} OWNER TO ${LEAF_MIGRATOR_USER:?};
ALTER SCHEMA public OWNER TO ${LEAF_MIGRATOR_USER:?};
GRANT CONNECT ON DATABASE ${POSTGRES_DB:?} TO ${LEAF_APP_USER:?};
GRANT USAGE ON SCHEMA public TO ${LEAF_APP_USER:?};
SQL
