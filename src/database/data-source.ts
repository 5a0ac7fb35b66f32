/**
 * DataSource for the TypeORM CLI (`npm run migration:run` / `migration:revert`).
 * Reads `LEAF_DB_URL` like the application does.
 */
import { DataSource } from 'typeorm';
import { loadAppConfig } from '../config/app-config';
import { buildDataSourceOptions } from './data-source.options';

export default new DataSource(buildDataSourceOptions(loadAppConfig().segment.database));
