#!/bin/bash
# The db-grants job of docker-compose.postgres.yml, after the migrate job: the service
# account gets exactly what it needs (docs/operations.md, "Least privilege"). Idempotent.
# The SQL between <<SQL and SQL is also run by test/migrate.e2e-spec.ts.
set -eo pipefail
export PGPASSWORD="${POSTGRES_PASSWORD:?}"
psql -v ON_ERROR_STOP=1 -h "${DB_HOST:?}" -U "${POSTGRES_USER:?}" -d "${POSTGRES_DB:?}" <<SQL
GRANT SELECT, INSERT, UPDATE ON leaf_alloc, leaf_worker_lease, leaf_sequence_issuer TO ${LEAF_APP_USER:?};
GRANT SELECT, INSERT ON leaf_alloc_journal, leaf_worker_lease_journal TO ${LEAF_APP_USER:?};
GRANT SELECT, INSERT, UPDATE ON leaf_gapless_series, leaf_gapless_counter, leaf_gapless_number TO ${LEAF_APP_USER:?};
GRANT SELECT, INSERT ON leaf_gapless_record TO ${LEAF_APP_USER:?};
SQL
echo "granted SELECT, INSERT, UPDATE on ${POSTGRES_DB}.leaf_alloc, leaf_worker_lease, leaf_sequence_issuer (SELECT, INSERT on leaf_alloc_journal, leaf_worker_lease_journal) to ${LEAF_APP_USER}"
