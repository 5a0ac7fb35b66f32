/**
 * The DataSource of the TypeORM CLI, from the project root as in any Nest app:
 *
 * ```sh
 * npm run migration:show                                        # development (ts-node)
 * npx typeorm migration:run -d dist/migrations/data-source.js   # built, e.g. in the image
 * ```
 *
 * It reads the database settings only, `LEAF_DB_URL` (and `NODE_ENV`: with
 * `NODE_ENV=production` `LEAF_DB_URL` must be set), so a migration job needs neither
 * ZooKeeper nor a worker identity. The options are the application's own
 * (src/database/data-source.options.ts) with the migration set of ./index.ts.
 */
import { DataSource } from 'typeorm';
import { loadDatabaseConfig } from '../src/config/database-config';
import { buildDataSourceOptions } from '../src/database/data-source.options';

export default new DataSource(buildDataSourceOptions(loadDatabaseConfig()));
