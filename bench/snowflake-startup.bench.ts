/**
 * Snowflake start-up with worker IDs leased from the database against ZooKeeper, in the same
 * run (`npm run bench:snowflake-startup`; a module of `npm run bench`). The built application
 * is started as a deployer does (environment only), round by round in turn on each source:
 * a worker-ID lease row in PostgreSQL, one in MariaDB, and a ZooKeeper registration (segment
 * mode on the same PostgreSQL database, so the processes differ in the worker-ID source only).
 * Measured: from the spawn to the first snowflake ID answered over HTTP. Each process stops
 * gracefully (SIGTERM) before the next starts, as in a rolling restart: its lease is released
 * and the restart has nothing to wait for. The ratio is the median of the per-round ratios.
 *
 * Against the shared MariaDB, PostgreSQL and ZooKeeper (test/support/services.ts), each run on
 * private databases and a ZooKeeper namespace of its own.
 */
import { randomBytes } from 'node:crypto';
import { createPostgresTestDatabase } from '../test/support/postgres-database';
import { zookeeperConnectString } from '../test/support/services';
import { createTestDatabase } from '../test/support/test-database';
import { ensureBuilt, LeafServer } from './support/leaf-server';
import {
  fmt,
  medianInterval,
  type BenchContext,
  type BenchModule,
  type BenchRow,
} from './support/report';
import { runAlone } from './support/run';

/** The identity of every start (PORT=0 names no port): one holder, restarted. */
const ADVERTISE = '127.0.0.1:19555';

/** The worker-ID sources compared, in the order of each round. */
type Source = 'postgres' | 'mariadb' | 'zookeeper';

/** Milliseconds from the spawn to the first `200` of `GET /api/snowflake/get/k`. */
async function startToFirstId(label: string, env: Record<string, string>): Promise<number> {
  const started = performance.now();
  const server = await LeafServer.start(label, env, { cpu: null });
  try {
    for (;;) {
      const answer = await fetch(`http://127.0.0.1:${server.port}/api/snowflake/get/k`).catch(
        () => null,
      );
      if (answer?.status === 200) return performance.now() - started;
      if (performance.now() - started > 60_000) throw new Error(`${label}: no ID within 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    await server.stop();
  }
}

/** `median [low–high]` of a list of milliseconds. */
function msCell(values: number[]): string {
  const m = medianInterval(values);
  const interval = m.low === null ? '' : ` [${fmt(m.low)}–${fmt(m.high!)}]`;
  return `${fmt(m.median)} ms${interval}`;
}

async function run(context: BenchContext): Promise<BenchRow[]> {
  ensureBuilt(context.log);
  const rounds = context.quick ? 1 : 9;
  const [postgres, mariadb] = await Promise.all([
    createPostgresTestDatabase({ migrate: true }),
    createTestDatabase({ migrate: true }),
  ]);
  const name = `bench-startup-${randomBytes(3).toString('hex')}`;
  const envs: Record<Source, Record<string, string>> = {
    postgres: { LEAF_DB_URL: postgres.url, LEAF_NAME: name, LEAF_SNOWFLAKE_ADVERTISE: ADVERTISE },
    mariadb: { LEAF_DB_URL: mariadb.url, LEAF_NAME: name, LEAF_SNOWFLAKE_ADVERTISE: ADVERTISE },
    zookeeper: {
      LEAF_DB_URL: postgres.url,
      LEAF_NAME: name,
      LEAF_ZK_ADDRESS: zookeeperConnectString(),
      LEAF_SNOWFLAKE_ADVERTISE: ADVERTISE,
    },
  };
  const times: Record<Source, number[]> = { postgres: [], mariadb: [], zookeeper: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      for (const source of Object.keys(envs) as Source[]) {
        const took = await startToFirstId(source, envs[source]);
        times[source].push(took);
        context.log(`snowflake-startup round ${round + 1}: ${source} ${took.toFixed(0)} ms`);
      }
    }
  } finally {
    await Promise.all([postgres.drop(), mariadb.drop()]);
  }
  const row = (source: 'postgres' | 'mariadb', label: string): BenchRow => {
    const ratios = times[source].map((t, i) => t / times.zookeeper[i]!);
    const r = medianInterval(ratios);
    const interval =
      r.low === null ? '' : ` (${(r.low * 100).toFixed(0)}–${(r.high! * 100).toFixed(0)} %)`;
    return {
      measurement: `start-up to the first snowflake ID, worker ID leased in ${label}`,
      figure: msCell(times[source]),
      baseline: `ZooKeeper: ${msCell(times.zookeeper)}`,
      ratio: `**${(r.median * 100).toFixed(1)} %**${interval}`,
      target: '—',
      met: null,
    };
  };
  return [row('postgres', 'PostgreSQL'), row('mariadb', 'MariaDB')];
}

/** Snowflake start-up on database leases against ZooKeeper. */
export const bench: BenchModule = {
  name: 'snowflake-startup',
  title: 'Snowflake start-up on database leases (baseline: ZooKeeper, same run)',
  run,
};

if (require.main === module) runAlone(bench);
