/**
 * Three application processes × N inserts into one table through an ORM, the primary key a
 * Leaf ID filled by the integration (test/system/harness/orm-insert-worker.ts), on one
 * PostgreSQL database: every insert succeeds (0 primary-key violations), the table holds
 * exactly 3 × N rows, and every row's ID is a valid ID of its mode — a segment ID within the
 * tag's allocated ranges (1..max_id), a snowflake ID of a worker ID leased by one of the three
 * processes, issued during the run.
 */
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from 'nestjs-leaf';
import { runScript } from '../../support/app-process';
import { createPostgresTestDatabase } from '../../support/postgres-database';

const PROCESSES = 3;

export type OrmName = 'typeorm' | 'drizzle' | 'mikro-orm' | 'prisma';

/** The mode of each ORM's IDs in the worker (its plan). */
export const ORM_MODES: Record<OrmName, 'segment' | 'snowflake'> = {
  typeorm: 'segment',
  drizzle: 'snowflake',
  'mikro-orm': 'segment',
  prisma: 'segment',
};

export interface WorkerResult {
  readonly inserted: number;
  readonly failures: number;
  readonly errors: string[];
  readonly ms: number;
}

export interface OrmInsertsResult {
  readonly workers: WorkerResult[];
  readonly rows: number;
  readonly distinct: number;
  /** IDs that are not valid IDs of the mode (see the file's comment). */
  readonly invalid: string[];
  readonly ms: number;
}

/** One worker process (test/system/harness/orm-insert-worker.ts) through ts-node, to its end. */
async function runWorker(orm: OrmName, env: Record<string, string>): Promise<WorkerResult> {
  const { code, stdout, stderr } = await runScript(
    'test/system/harness/orm-insert-worker.ts',
    [orm],
    {
      env: { ...process.env, ...env },
      timeoutMs: 15 * 60_000,
    },
  );
  const line = stdout.split('\n').find((text) => text.startsWith('ORM_WORKER '));
  if (code === 0 && line) return JSON.parse(line.slice('ORM_WORKER '.length)) as WorkerResult;
  throw new Error(`${orm} worker ended with ${code}:\n${(stdout + stderr).slice(-4000)}`);
}

/** Runs the scenario for `orm` with `rows` inserts per process. */
export async function ormInserts(
  orm: OrmName,
  rows: number,
  options: { batch?: number; single?: number; step?: number } = {},
): Promise<OrmInsertsResult> {
  const database = await createPostgresTestDatabase({ migrate: true });
  const table = `orm_${orm.replace('-', '_')}_rows`;
  try {
    await database.query(
      `CREATE TABLE ${table} (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL)`,
    );
    // A small step: the three processes load ranges of the tag concurrently, many times.
    await database.query(`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ($1, 1, $2)`, [
      table,
      options.step ?? 2000,
    ]);
    const started = Date.now();
    const workers = await Promise.all(
      Array.from({ length: PROCESSES }, (_, index) =>
        runWorker(orm, {
          DATABASE_URL: database.url,
          ORM_TABLE: table,
          ORM_ROWS: String(rows),
          ORM_BATCH: String(options.batch ?? 500),
          ORM_SINGLE: String(options.single ?? Math.min(1000, Math.floor(rows / 10))),
          ORM_ADVERTISE: `127.0.0.1:${20000 + index}`,
        }),
      ),
    );
    const ms = Date.now() - started;
    const ids = (
      await database.query<{ id: string }>(`SELECT CAST(id AS TEXT) AS id FROM ${table}`)
    ).map((row) => BigInt(row.id));
    const invalid: string[] = [];
    if (ORM_MODES[orm] === 'segment') {
      const [{ max_id }] = await database.query<{ max_id: string }>(
        'SELECT CAST(max_id AS TEXT) AS max_id FROM leaf_alloc WHERE biz_tag = $1',
        [table],
      );
      for (const id of ids) if (id < 1n || id > BigInt(max_id)) invalid.push(String(id));
    } else {
      const leased = new Set(
        (
          await database.query<{ worker_id: number }>('SELECT worker_id FROM leaf_worker_lease')
        ).map((row) => Number(row.worker_id)),
      );
      const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
      for (const id of ids) {
        const decoded = layout.decode(id);
        const inRun = decoded.timestamp >= started - 60_000 && decoded.timestamp <= Date.now();
        if (!leased.has(decoded.workerId) || !inRun) invalid.push(String(id));
      }
    }
    return {
      workers,
      rows: ids.length,
      distinct: new Set(ids).size,
      invalid: invalid.slice(0, 20),
      ms,
    };
  } finally {
    await database.drop();
  }
}

/** The scenario's claims for `rows` inserts per process. */
export function expectOrmInsertsClean(result: OrmInsertsResult, rows: number): void {
  expect(result.workers.flatMap((worker) => worker.errors)).toEqual([]);
  expect(result.workers.map((worker) => worker.failures)).toEqual([0, 0, 0]);
  expect(result.workers.map((worker) => worker.inserted)).toEqual([rows, rows, rows]);
  expect(result.rows).toBe(PROCESSES * rows);
  expect(result.distinct).toBe(PROCESSES * rows);
  expect(result.invalid).toEqual([]);
}
