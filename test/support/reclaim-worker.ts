/**
 * A real process that runs one snowflake worker through the library's own start-up code
 * (`SnowflakeWorker.start`: registration, reclaim, liveness node, time lease, the same path
 * as the application's `SnowflakeService`), with the real ZooKeeper client and state file,
 * and prints every ID it hands out. Used by the worker-ID reclaim tests
 * (test/system/worker-reclaim.*): starting it is much faster than the whole application.
 *
 *   node -r ts-node/register/transpile-only test/support/reclaim-worker.ts
 *
 * Environment: RW_ZK (connect string), RW_NAME (namespace), RW_IDENTITY (ip:port),
 * RW_STATE_DIR, RW_RECLAIM (never|when-exhausted|always), RW_WORKER_BITS (default 10),
 * RW_SESSION_TIMEOUT_MS, RW_LEASE_MS, RW_HEARTBEAT_MS, RW_MARGIN_MS, RW_BATCH (IDs per line).
 *
 * Output, one line each: `START <workerId> <run> <startupWaitMs>`; `IDS <id> <id> ...` (IDs
 * written only once handed out); `READY <true|false> <reason>` whenever readiness changes;
 * `FAIL <code> <message>` when start-up is refused (then exit code 1).
 */
import { ZookeeperClient } from '../../libs/leaf/src/adapters/zookeeper/zookeeper.client';
import { WorkerStateFile } from '../../libs/leaf/src/adapters/fs/worker-state.file';
import { systemClock } from '../../libs/leaf/src/core/clock';
import { LeafError } from '../../libs/leaf/src/core/errors/leaf.error';
import {
  DEFAULT_SNOWFLAKE_EPOCH,
  LEAF_LAYOUT,
} from '../../libs/leaf/src/core/snowflake/snowflake-layout';
import type { SnowflakeLogger } from '../../libs/leaf/src/core/snowflake/snowflake-logger';
import type { WorkerReclaimMode } from '../../libs/leaf/src/core/snowflake/snowflake-settings';
import { SnowflakeWorker } from '../../libs/leaf/src/core/snowflake/snowflake-worker';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const num = (name: string, fallback: number) => Number(env(name, String(fallback)));
const line = (text: string) => process.stdout.write(`${text}\n`);

const logger: SnowflakeLogger = {
  log: (message) => process.stderr.write(`LOG ${message}\n`),
  warn: (message) => process.stderr.write(`WARN ${message}\n`),
  error: (message) => process.stderr.write(`ERROR ${message}\n`),
};

async function main(): Promise<void> {
  const [ip, port] = env('RW_IDENTITY').split(':');
  const sessionTimeoutMs = num('RW_SESSION_TIMEOUT_MS', 4000);
  const heartbeatIntervalMs = num('RW_HEARTBEAT_MS', 300);
  const zk = new ZookeeperClient({ connect: env('RW_ZK'), sessionTimeoutMs });
  const workerBits = num('RW_WORKER_BITS', 10);
  let worker: SnowflakeWorker;
  try {
    worker = await SnowflakeWorker.start({
      name: env('RW_NAME'),
      clock: systemClock,
      zk,
      stateStore: (identity) => new WorkerStateFile(env('RW_STATE_DIR'), identity),
      logger,
      snowflake: {
        workerSource: {
          kind: 'zookeeper',
          connect: env('RW_ZK'),
          sessionTimeoutMs,
          connectTimeoutMs: 10_000,
          advertise: { ip: ip!, port: Number(port) },
          reclaim: env('RW_RECLAIM', 'when-exhausted') as WorkerReclaimMode,
          reclaimMarginMs: num('RW_MARGIN_MS', 500),
        },
        epoch: DEFAULT_SNOWFLAKE_EPOCH,
        layout: { ...LEAF_LAYOUT, workerBits },
        dataCenterId: 0,
        stateDir: env('RW_STATE_DIR'),
        sequenceRandomBound: 100,
        clockBackwardsToleranceMs: 5,
        heartbeatIntervalMs,
        leaseMs: num('RW_LEASE_MS', 1000),
        // No local runway: a holder cut off from ZooKeeper stops at its lease, so a reclaim
        // waits only for the lease (the default 60 s runway would make every reclaim wait 60 s).
        localRunwayMs: 0,
        startupMaxWaitMs: 60_000,
      },
    });
  } catch (error) {
    const code = error instanceof LeafError ? error.code : 'ERROR';
    line(`FAIL ${code} ${(error as Error).message.replace(/\n/g, ' ')}`);
    await zk.close();
    process.exitCode = 1;
    return;
  }
  const snapshot = worker.snapshot();
  line(`START ${worker.workerId} ${worker.run} ${snapshot.startupWaitMs}`);
  setInterval(() => void worker.heartbeat().catch(() => undefined), heartbeatIntervalMs).unref();
  let ready = '';
  const batch = num('RW_BATCH', 20);
  const report = () => {
    const now = worker.readiness();
    const text = `${now.ready} ${now.reason ?? ''}`;
    if (text !== ready) line(`READY ${(ready = text)}`);
  };
  // Runs until killed: one batch every 2 ms (about 10,000 IDs a second).
  for (;;) {
    report();
    try {
      const ids = await worker.generator.take(batch);
      line(`IDS ${ids.join(' ')}`);
    } catch {
      // Refused (lease revoked, not ready): readiness says why; nothing was handed out.
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

void main();
