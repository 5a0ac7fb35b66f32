import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { serverDatabase, type DatabaseConfig } from '../config/database-config';
import { DatabaseConnector } from './database-connector';
import { buildDataSourceOptions } from './data-source.options';

/** Injection token of the application's TypeORM DataSource. */
export const LEAF_DATA_SOURCE = Symbol('LEAF_DATA_SOURCE');
/**
 * With `LEAF_DB_URLS`: every DataSource, in the order of the list (`null` with one database).
 */
export const LEAF_DATA_SOURCES = Symbol('LEAF_DATA_SOURCES');
/**
 * With `LEAF_SEGMENT_HIGH_WATER_DB_URL`: the DataSource of the high-water marks' own database
 * (`null` without it).
 */
export const LEAF_HIGH_WATER_DATA_SOURCE = Symbol('LEAF_HIGH_WATER_DATA_SOURCE');
/** With `LEAF_REGION_DB_URL`: the region registry's DataSource (`null` without it). */
export const LEAF_REGION_DATA_SOURCE = Symbol('LEAF_REGION_DATA_SOURCE');
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
            const open = (database: DatabaseConfig) =>
              new DatabaseConnector(
                new DataSource(buildDataSourceOptions(database)),
                migrate,
                database.type !== 'sqlite',
              );
            // The marks' and the region registry's databases: their own schema, their own retries.
            const own = (database: DatabaseConfig, role: 'high-water' | 'region', env: string) =>
              new DatabaseConnector(
                new DataSource(buildDataSourceOptions(database, role)),
                migrate,
                true,
                env,
              );
            const connectors: Connectors = {
              allocation: databases.map(open),
              highWater:
                allocation && config.highWater
                  ? own(config.highWater, 'high-water', 'LEAF_SEGMENT_HIGH_WATER_DB_URL')
                  : null,
              region: region ? own(region, 'region', 'LEAF_REGION_DB_URL') : null,
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
          provide: LEAF_DATA_SOURCE,
          useFactory: ({ allocation: [first] }: Connectors): DataSource | null =>
            first?.dataSource ?? null,
          inject: [DATABASE_CONNECTORS],
        },
        {
          provide: LEAF_DATA_SOURCES,
          useFactory: (connectors: Connectors): DataSource[] | null =>
            urls ? connectors.allocation.map((connector) => connector.dataSource) : null,
          inject: [DATABASE_CONNECTORS],
        },
        {
          provide: LEAF_HIGH_WATER_DATA_SOURCE,
          useFactory: ({ highWater }: Connectors): DataSource | null =>
            highWater?.dataSource ?? null,
          inject: [DATABASE_CONNECTORS],
        },
        {
          provide: LEAF_REGION_DATA_SOURCE,
          useFactory: ({ region: registry }: Connectors): DataSource | null =>
            registry?.dataSource ?? null,
          inject: [DATABASE_CONNECTORS],
        },
        DataSourceCloser,
      ],
      exports: [
        LEAF_DATA_SOURCE,
        LEAF_DATA_SOURCES,
        LEAF_HIGH_WATER_DATA_SOURCE,
        LEAF_REGION_DATA_SOURCE,
      ],
    };
  }
}
