import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { serverDatabase, type DatabaseConfig } from '../config/database-config';
import { DatabaseConnector } from './database-connector';
import { buildDataSourceOptions, type DatabaseRole } from './data-source.options';

/** The application's DataSources by role; `null` where that database is not configured. */
export interface AppDataSources {
  /** `LEAF_DB_URL`, or the first of `LEAF_DB_URLS`. */
  readonly dataSource: DataSource | null;
  /** With `LEAF_DB_URLS`: every DataSource, in the order of the list. */
  readonly dataSources: DataSource[] | null;
  /** `LEAF_SEGMENT_HIGH_WATER_DB_URL`: the high-water marks' own database. */
  readonly highWater: DataSource | null;
  /** `LEAF_REGION_DB_URL`: the region registry's. */
  readonly region: DataSource | null;
}

/** Injection token of the application's {@link AppDataSources}. */
export const APP_DATA_SOURCES = Symbol('APP_DATA_SOURCES');
const DATABASE_CONNECTORS = Symbol('DATABASE_CONNECTORS');

/** The databases the module opened, each named by its role. */
interface Connectors {
  /** `LEAF_DB_URL` or each of `LEAF_DB_URLS`, in their order (none: the registry's alone). */
  readonly allocation: readonly DatabaseConnector[];
  readonly highWater: DatabaseConnector | null;
  readonly region: DatabaseConnector | null;
}

function everyConnector({ allocation, highWater, region }: Connectors): DatabaseConnector[] {
  return [...allocation, highWater, region].filter((c): c is DatabaseConnector => c !== null);
}

class DataSourceCloser implements OnApplicationShutdown {
  constructor(@Inject(DATABASE_CONNECTORS) private readonly connectors: Connectors) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(everyConnector(this.connectors).map((connector) => connector.stop()));
  }
}

/**
 * Opens the configured database (and applies pending migrations when `LEAF_DB_MIGRATE`
 * is on) before anything that needs it starts; closes it last. A database server that does not
 * answer at start does not fail start-up: see {@link DatabaseConnector}.
 */
@Module({})
export class DatabaseModule {
  static forRoot(
    config: AppConfig['segment'],
    /** `LEAF_REGION_DB_URL`: the region registry's database. */
    region: DatabaseConfig | null = null,
    /** Whether the allocation databases open (false: the region registry's alone). */
    allocation = true,
  ): DynamicModule {
    const urls = allocation ? config.urls : null;
    const migrate = config.migrate;
    return {
      module: DatabaseModule,
      providers: [
        {
          provide: DATABASE_CONNECTORS,
          useFactory: async (): Promise<Connectors> => {
            // Several databases: each connects (and retries) on its own, so one that is down
            // at start does not hold the others back.
            const databases = !allocation
              ? []
              : urls
                ? urls.map(serverDatabase)
                : [config.database];
            // A server retries while it does not answer; the marks' and the region registry's
            // databases with their own schema (role) and variable (in the log lines).
            const open = (database: DatabaseConfig, role?: DatabaseRole, variable?: string) =>
              new DatabaseConnector(
                new DataSource(buildDataSourceOptions(database, role)),
                migrate,
                database.type !== 'sqlite',
                variable,
              );
            const connectors: Connectors = {
              allocation: databases.map((database) => open(database)),
              highWater:
                allocation && config.highWater
                  ? open(config.highWater, 'high-water', 'LEAF_SEGMENT_HIGH_WATER_DB_URL')
                  : null,
              region: region ? open(region, 'region', 'LEAF_REGION_DB_URL') : null,
            };
            try {
              await Promise.all(everyConnector(connectors).map((connector) => connector.start()));
            } catch (error) {
              await Promise.all(everyConnector(connectors).map((connector) => connector.stop()));
              throw error;
            }
            return connectors;
          },
        },
        {
          provide: APP_DATA_SOURCES,
          useFactory: ({
            allocation,
            highWater,
            region: registry,
          }: Connectors): AppDataSources => ({
            dataSource: allocation[0]?.dataSource ?? null,
            dataSources: urls ? allocation.map((connector) => connector.dataSource) : null,
            highWater: highWater?.dataSource ?? null,
            region: registry?.dataSource ?? null,
          }),
          inject: [DATABASE_CONNECTORS],
        },
        DataSourceCloser,
      ],
      exports: [APP_DATA_SOURCES],
    };
  }
}
