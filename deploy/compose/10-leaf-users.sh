#!/bin/bash
# Run once by the MariaDB image on an empty data directory (docker-entrypoint-initdb.d):
# the two accounts of docs/operations.md ("Least privilege").
#   - the migrator: schema changes in the Leaf database, used only by the one-shot migrate job;
#   - the service: no privileges yet. leaf_alloc does not exist before the first migration,
#     and MariaDB grants on a table only once it exists: grant-app.sh (the db-grants job)
#     gives it SELECT, UPDATE on leaf_alloc after the migration.
# The SQL between <<SQL and SQL is also run by test/deploy-migrate.e2e-spec.ts.
set -eo pipefail
mariadb --protocol=socket -uroot -p"${MARIADB_ROOT_PASSWORD:?}" <<SQL
CREATE USER IF NOT EXISTS '${LEAF_MIGRATOR_USER:?}'@'%' IDENTIFIED BY '${LEAF_MIGRATOR_PASSWORD:?}';
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, INDEX, DROP, TRIGGER ON \`${MARIADB_DATABASE:?}\`.* TO '${LEAF_MIGRATOR_USER:?}'@'%';
CREATE USER IF NOT EXISTS '${LEAF_APP_USER:?}'@'%' IDENTIFIED BY '${LEAF_APP_PASSWORD:?}';
SQL
