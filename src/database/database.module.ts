import {
  Inject,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { buildDataSourceOptions } from './data-source.options';

/** Injection token of the application's TypeORM DataSource. */
export const LEAF_DATA_SOURCE = Symbol('LEAF_DATA_SOURCE');

class DataSourceCloser implements OnApplicationShutdown {
  private readonly logger = new Logger('Database');

  constructor(@Inject(LEAF_DATA_SOURCE) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    try {
      if (this.dataSource.isInitialized) await this.dataSource.destroy();
    } catch (error) {
      this.logger.warn(`Closing the database failed: ${String(error)}`);
    }
  }
}

/**
 * Opens the configured database (and applies pending migrations when `LEAF_DB_MIGRATE`
 * is on) before anything that needs it starts; closes it last.
 */
@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig['segment']): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        {
          provide: LEAF_DATA_SOURCE,
          useFactory: async (): Promise<DataSource> => {
            const dataSource = new DataSource(buildDataSourceOptions(config.database));
            await dataSource.initialize();
            try {
              if (config.migrate) await dataSource.runMigrations({ transaction: 'each' });
            } catch (error) {
              await dataSource.destroy();
              throw error;
            }
            return dataSource;
          },
        },
        DataSourceCloser,
      ],
      exports: [LEAF_DATA_SOURCE],
    };
  }
}
