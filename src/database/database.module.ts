import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { DatabaseConnector } from './database-connector';
import { buildDataSourceOptions } from './data-source.options';

/** Injection token of the application's TypeORM DataSource. */
export const LEAF_DATA_SOURCE = Symbol('LEAF_DATA_SOURCE');
const DATABASE_CONNECTOR = Symbol('DATABASE_CONNECTOR');

class DataSourceCloser implements OnApplicationShutdown {
  constructor(@Inject(DATABASE_CONNECTOR) private readonly connector: DatabaseConnector) {}

  onApplicationShutdown(): Promise<void> {
    return this.connector.stop();
  }
}

/**
 * Opens the configured database (and applies pending migrations when `LEAF_DB_MIGRATE`
 * is on) before anything that needs it starts; closes it last. A MySQL server that does not
 * answer at start does not fail start-up: see {@link DatabaseConnector}.
 */
@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig['segment']): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        {
          provide: DATABASE_CONNECTOR,
          useFactory: async (): Promise<DatabaseConnector> => {
            const connector = new DatabaseConnector(
              new DataSource(buildDataSourceOptions(config.database)),
              config.migrate,
              config.database.type === 'mysql',
            );
            await connector.start();
            return connector;
          },
        },
        {
          provide: LEAF_DATA_SOURCE,
          useFactory: (connector: DatabaseConnector): DataSource => connector.dataSource,
          inject: [DATABASE_CONNECTOR],
        },
        DataSourceCloser,
      ],
      exports: [LEAF_DATA_SOURCE],
    };
  }
}
