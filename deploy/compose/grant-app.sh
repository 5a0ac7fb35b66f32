#!/bin/bash
# The db-grants job of docker-compose.yml, after the migrate job: the service account gets
# exactly what it needs (docs/operations.md, "Least privilege"). Idempotent.
# The SQL between <<SQL and SQL is also run by test/deploy-migrate.e2e-spec.ts.
set -eo pipefail
mariadb -h"${DB_HOST:?}" -uroot -p"${MARIADB_ROOT_PASSWORD:?}" <<SQL
GRANT SELECT, UPDATE ON \`${MARIADB_DATABASE:?}\`.leaf_alloc TO '${LEAF_APP_USER:?}'@'%';
GRANT SELECT, INSERT, UPDATE ON \`${MARIADB_DATABASE:?}\`.leaf_sequence_issuer TO '${LEAF_APP_USER:?}'@'%';
GRANT SELECT, INSERT, UPDATE ON \`${MARIADB_DATABASE:?}\`.leaf_worker_lease TO '${LEAF_APP_USER:?}'@'%';
GRANT SELECT, INSERT ON \`${MARIADB_DATABASE:?}\`.leaf_alloc_journal TO '${LEAF_APP_USER:?}'@'%';
GRANT SELECT, INSERT ON \`${MARIADB_DATABASE:?}\`.leaf_worker_lease_journal TO '${LEAF_APP_USER:?}'@'%';
GRANT SELECT, INSERT, UPDATE ON \`${MARIADB_DATABASE:?}\`.leaf_gapless_series TO '${LEAF_APP_USER:?}'@'%';
GRANT SELECT, INSERT, UPDATE ON \`${MARIADB_DATABASE:?}\`.leaf_gapless_counter TO '${LEAF_APP_USER:?}'@'%';
GRANT SELECT, INSERT, UPDATE ON \`${MARIADB_DATABASE:?}\`.leaf_gapless_number TO '${LEAF_APP_USER:?}'@'%';
GRANT SELECT, INSERT ON \`${MARIADB_DATABASE:?}\`.leaf_gapless_record TO '${LEAF_APP_USER:?}'@'%';
SQL
echo "granted SELECT, UPDATE on ${MARIADB_DATABASE}.leaf_alloc (and the coordination tables leaf_sequence_issuer, leaf_worker_lease; SELECT, INSERT on the ID journal; the gapless series' tables) to ${LEAF_APP_USER}"
