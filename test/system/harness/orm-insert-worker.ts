/**
 * One application process of test/system/scenarios/orm-inserts.ts: a Nest application
 * context with `LeafModule` in this process (segment mode on `DATABASE_URL`, snowflake worker
 * IDs leased from the same database) inserting `ORM_ROWS` rows into `ORM_TABLE` through the
 * ORM named in argv[2] (`typeorm`, `drizzle`, `mikro-orm`, `prisma`), the primary key a Leaf ID filled
 * by the integration — batches of `ORM_BATCH` rows (MikroORM: one flush each), the last
 * `ORM_SINGLE` rows one at a time. Prints one line
 * `ORM_WORKER {"inserted":n,"failures":n,"errors":[...],"ms":n}`; a failed insert is counted
 * and reported, never retried.
 */
import 'reflect-metadata';
import { defineEntity, p } from '@mikro-orm/core';
import { MikroORM } from '@mikro-orm/postgresql';
import { Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PrismaPg } from '@prisma/adapter-pg';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { bigint, pgTable, varchar } from 'drizzle-orm/pg-core';
import {
  IdService,
  LeafModule,
  SegmentService,
  SnowflakeService,
  type LeafModuleOptions,
} from 'nestjs-leaf';
import { leafIdDefault } from 'nestjs-leaf/orm/sync';
import { leafPrismaIds } from 'nestjs-leaf/orm/prisma';
import { LeafIdColumn, LeafTypeOrmModule } from 'nestjs-leaf/orm/typeorm';
import { LeafAllocEntity } from 'nestjs-leaf/storage/typeorm';
import { Pool } from 'pg';
import { Column, DataSource, Entity } from 'typeorm';
import { generatePrismaClient } from '../../support/prisma-client';
import { requiredEnv } from '../../support/required-env';

const URL = requiredEnv('DATABASE_URL');
const TABLE = requiredEnv('ORM_TABLE');
const ROWS = Number(requiredEnv('ORM_ROWS'));
const BATCH = Number(requiredEnv('ORM_BATCH'));
const SINGLE = Number(requiredEnv('ORM_SINGLE'));
/** This process's identity for its worker-ID lease (unique per process of a run). */
const ADVERTISE = requiredEnv('ORM_ADVERTISE');

/** Inserts `count` rows named from `first` in one statement (count 1: a single-row insert). */
type Insert = (first: number, count: number) => Promise<void>;

interface Plan {
  readonly module: DynamicModule;
  insert(app: INestApplicationContext): Insert | Promise<Insert>;
  /** Closes what the plan opened besides the application. */
  close?(): Promise<void>;
}

function leafOptions(dataSource: DataSource): LeafModuleOptions {
  return {
    name: 'orm-inserts',
    segment: { dataSource },
    snowflake: { database: true, advertise: ADVERTISE },
  };
}

/** TypeORM: `@LeafIdColumn()` (segment, tag = the table) and the subscriber. */
function typeormPlan(): Plan {
  @Entity({ name: TABLE })
  class Row {
    @LeafIdColumn({ mode: 'segment' })
    id!: string;

    @Column({ type: 'varchar', length: 64 })
    name!: string;
  }

  @Module({
    imports: [
      ScheduleModule.forRoot(),
      TypeOrmModule.forRoot({ type: 'postgres', url: URL, entities: [LeafAllocEntity, Row] }),
      LeafModule.forRootAsync({
        isGlobal: true,
        modes: ['segment', 'snowflake'],
        inject: [DataSource],
        useFactory: leafOptions,
      }),
      LeafTypeOrmModule.forRoot({}),
    ],
  })
  class TypeormApp {}

  return {
    module: { module: TypeormApp },
    insert: (app) => {
      const rows = app.get(DataSource).getRepository(Row);
      return async (first, count) => {
        const batch = Array.from({ length: count }, (_, i) => ({ name: `r${first + i}` }));
        await (count === 1 ? rows.insert(batch[0]) : rows.insert(batch));
      };
    },
  };
}

/** Drizzle: `$defaultFn(leafIdDefault(snowflake))` — snowflake IDs on the warm path. */
function drizzlePlan(): Plan {
  const sources: { snowflake?: SnowflakeService } = {};
  const leases = new DataSource({ type: 'postgres', url: URL });
  const pool = new Pool({ connectionString: URL, max: 2 });
  const table = pgTable(TABLE, {
    id: bigint('id', { mode: 'bigint' })
      .primaryKey()
      .$defaultFn(leafIdDefault(() => sources.snowflake!, TABLE)),
    name: varchar('name', { length: 64 }).notNull(),
  });

  @Module({
    imports: [
      ScheduleModule.forRoot(),
      LeafModule.forRootAsync({
        modes: ['snowflake'],
        useFactory: async () => ({
          name: 'orm-inserts',
          segment: false,
          snowflake: { database: { dataSource: await leases.initialize() }, advertise: ADVERTISE },
        }),
      }),
    ],
  })
  class DrizzleApp {}

  return {
    module: { module: DrizzleApp },
    insert: (app) => {
      sources.snowflake = app.get(SnowflakeService);
      const db = drizzle(pool);
      return async (first, count) => {
        const batch = Array.from({ length: count }, (_, i) => ({ name: `r${first + i}` }));
        await db.insert(table).values(batch);
      };
    },
    close: async () => {
      await pool.end();
      await leases.destroy();
    },
  };
}

/**
 * MikroORM 7: `onCreate(leafIdDefault(() => segments, table))` — segment IDs on the warm path
 * (`warmTags`), taken in `em.create()`; one flush per batch (≤ `ORM_BATCH` entities, within
 * what the tag's buffers hold), written in MikroORM's multi-row INSERTs.
 */
function mikroOrmPlan(): Plan {
  const sources: { segments?: SegmentService } = {};
  const Row = defineEntity({
    name: 'Row',
    tableName: TABLE,
    properties: {
      id: p
        .bigint()
        .primary()
        .autoincrement(false)
        .onCreate(leafIdDefault(() => sources.segments!, TABLE)),
      name: p.string().length(64),
    },
  });
  let closeOrm: (() => Promise<void>) | undefined;

  @Module({
    imports: [
      ScheduleModule.forRoot(),
      TypeOrmModule.forRoot({ type: 'postgres', url: URL, entities: [LeafAllocEntity] }),
      LeafModule.forRootAsync({
        modes: ['segment'],
        inject: [DataSource],
        useFactory: (dataSource: DataSource) => ({
          name: 'orm-inserts',
          segment: { dataSource, warmTags: [TABLE] },
        }),
      }),
    ],
  })
  class MikroOrmApp {}

  return {
    module: { module: MikroOrmApp },
    insert: async (app) => {
      sources.segments = app.get(SegmentService);
      const started = await MikroORM.init({ entities: [Row], clientUrl: URL, pool: { max: 2 } });
      closeOrm = () => started.close();
      return async (first, count) => {
        const em = started.em.fork();
        for (let i = 0; i < count; i++) em.create(Row, { name: `r${first + i}` });
        await em.flush();
      };
    },
    close: async () => {
      await closeOrm?.();
    },
  };
}

/** The generated client's one model, as this worker uses it. */
interface PrismaRows {
  row: {
    create(args: { data: { name: string } }): Promise<unknown>;
    createMany(args: { data: Array<{ name: string }> }): Promise<unknown>;
  };
  $extends(extension: unknown): PrismaRows;
  $disconnect(): Promise<void>;
}

/** Prisma 7: `leafPrismaIds` over `IdService` (segment, tag = the table), `createMany`. */
function prismaPlan(): Plan {
  let client: PrismaRows | undefined;
  let remove: (() => void) | undefined;

  @Module({
    imports: [
      ScheduleModule.forRoot(),
      TypeOrmModule.forRoot({ type: 'postgres', url: URL, entities: [LeafAllocEntity] }),
      LeafModule.forRootAsync({
        modes: ['segment'],
        inject: [DataSource],
        useFactory: (dataSource: DataSource) => ({ name: 'orm-inserts', segment: { dataSource } }),
      }),
    ],
  })
  class PrismaApp {}

  return {
    module: { module: PrismaApp },
    insert: async (app) => {
      const generated = await generatePrismaClient<PrismaRows>(
        'postgresql',
        `model Row {\n  id   BigInt @id @default(dbgenerated())\n  name String @db.VarChar(64)\n\n  @@map("${TABLE}")\n}`,
      );
      remove = generated.remove;
      const adapter = new PrismaPg({ connectionString: URL, max: 2 });
      const rows = new generated.PrismaClient({ adapter }).$extends(
        leafPrismaIds(app.get(IdService), { models: { Row: {} } }),
      );
      client = rows;
      return async (first, count) => {
        const names = Array.from({ length: count }, (_, i) => ({ name: `r${first + i}` }));
        await (count === 1
          ? rows.row.create({ data: names[0] })
          : rows.row.createMany({ data: names }));
      };
    },
    close: async () => {
      await client?.$disconnect();
      remove?.();
    },
  };
}

const PLANS: Record<string, () => Plan> = {
  typeorm: typeormPlan,
  drizzle: drizzlePlan,
  'mikro-orm': mikroOrmPlan,
  prisma: prismaPlan,
};

async function main(): Promise<void> {
  const plan = PLANS[process.argv[2]]?.();
  if (!plan) throw new Error(`unknown ORM ${process.argv[2]}; one of ${Object.keys(PLANS)}`);
  const app = await NestFactory.createApplicationContext(plan.module, { logger: ['error'] });
  app.enableShutdownHooks();
  const insert = await plan.insert(app);
  let inserted = 0;
  let failures = 0;
  const errors: string[] = [];
  const started = Date.now();
  const attempt = async (first: number, count: number) => {
    try {
      await insert(first, count);
      inserted += count;
    } catch (error) {
      failures += count;
      if (errors.length < 5) errors.push(String((error as Error).message ?? error));
    }
  };
  let next = 0;
  while (next < ROWS - SINGLE) {
    const count = Math.min(BATCH, ROWS - SINGLE - next);
    await attempt(next, count);
    next += count;
  }
  while (next < ROWS) await attempt(next++, 1);
  const ms = Date.now() - started;
  await app.close();
  await plan.close?.();
  console.log(`ORM_WORKER ${JSON.stringify({ inserted, failures, errors, ms })}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
