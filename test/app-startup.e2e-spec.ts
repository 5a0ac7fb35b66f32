/**
 * Every start-up refusal of snowflake mode (issue 3), checked on the real process: the
 * application is spawned as `npm start` runs it (`dist/src/main.js` when the build is fresh,
 * else `src/main.ts` through ts-node), with a crafted environment and state directory, and must exit with code 1 and say why on stderr
 * (`Leaf failed to start: [LEAF_…] …`, no stack trace). The one case that must start, does:
 * it answers on its port and is then stopped.
 *
 * "ZooKeeper unreachable" is an address nothing listens on (127.0.0.1:1): no server is ever
 * stopped. Only the exhausted namespace needs the real ZooKeeper. The processes run in
 * parallel; each has a timeout.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { LeafErrorCode, SnowflakeLayout } from 'nestjs-leaf';
import { type WorkerIdentity, type WorkerState } from 'nestjs-leaf/ports';
import { workerStateFileName } from '@app/leaf/core/snowflake/worker-state';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { tempDir } from './support/app';
import { AppProcess, killAllAppProcesses, type ProcessExit } from './support/app-process';
import { HttpClient } from './support/http-client';
import { describeWithServices, zookeeperConnectString } from './support/services';
import { writeRawWorkerState, writeWorkerState } from './support/worker-state';
import { connectZookeeperAdmin, deleteTree } from './support/zookeeper';
import { fillSequence } from '@app/leaf/testing/zk-test-helpers';

const HOUR = 3_600_000;
/** Leaf's default epoch, as the application uses it. */
const layout = new SnowflakeLayout(1288834974657);
const run = randomBytes(4).toString('hex');
/** With '-' on purpose: worker IDs are parsed from the last '-'. */
const NAME = `e2e-start-${run}`;
const UNREACHABLE = '127.0.0.1:1';
/**
 * Each process needs about 2 s of CPU to start through ts-node (less when built), and the
 * "unreachable" ones wait out their 1 s ZooKeeper connect timeout; all of them run at once.
 */
const SPAWN_TIMEOUT_MS = 45_000;
jest.setTimeout(SPAWN_TIMEOUT_MS + 15_000);

/** What every spawn shares: a quick start (no segment mode), an ephemeral port. */
function baseEnv(stateDir: string): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    LEAF_NAME: NAME,
    LEAF_SEGMENT_ENABLED: 'false',
    LEAF_STATE_DIR: stateDir,
  };
}

/**
 * The environment of an instance that registers `127.0.0.1:<port>` with an unreachable
 * ZooKeeper; it gives up connecting after 1 s (the default is 5 s): nothing listens there.
 */
function unreachableEnv(stateDir: string, advertisePort: number): Record<string, string> {
  return {
    ...baseEnv(stateDir),
    LEAF_ZK_ADDRESS: UNREACHABLE,
    LEAF_ZK_CONNECT_TIMEOUT_MS: '1000',
    LEAF_SNOWFLAKE_ADVERTISE: `127.0.0.1:${advertisePort}`,
  };
}

const zkIdentity = (port: number): WorkerIdentity => ({
  kind: 'zookeeper',
  name: NAME,
  ip: '127.0.0.1',
  port,
});
const embeddedIdentity = (workerId: number): WorkerIdentity => ({
  kind: 'embedded',
  name: NAME,
  workerId,
});

function describeExit(exit: ProcessExit): string {
  return (
    `exit code ${exit.code}, signal ${exit.signal}${exit.timedOut ? ' (killed by the timeout)' : ''} ` +
    `after ${exit.durationMs} ms\n--- stderr ---\n${exit.stderr}\n--- stdout (end) ---\n${exit.stdout.slice(-3000)}`
  );
}

/**
 * The process refused to start: exit code 1, never listened, one `Leaf failed to start:` report
 * on stderr led by `[code]`, no stack trace. Returns the report (to the end of stderr: a
 * configuration error spans several lines).
 */
function expectRefusal(exit: ProcessExit, code: string): string {
  if (exit.code !== 1 || exit.signal !== null || exit.timedOut) {
    throw new Error(`expected a refusal with exit code 1 (${code}); got ${describeExit(exit)}`);
  }
  expect(exit.stdout).not.toContain('Leaf listening on');
  expect(exit.stderr.match(/Leaf failed to start: /g) ?? []).toHaveLength(1);
  const report = exit.stderr.slice(exit.stderr.indexOf('Leaf failed to start: '));
  expect(report).toMatch(new RegExp(`^Leaf failed to start: \\[${code}\\] `));
  expect(report).not.toMatch(/\n\s+at |\.ts:\d+/);
  return report;
}

describe('start-up of the real process (no ZooKeeper server needed)', () => {
  let dir: ReturnType<typeof tempDir>;
  const exits = new Map<string, Promise<ProcessExit>>();
  let cached: AppProcess;
  let cachedState: { workerId: number; file: string };

  beforeAll(async () => {
    dir = tempDir('leaf-startup');
    const stateDir = (label: string): string => join(dir.path, label);
    const now = Date.now();
    const spawnRefusal = (label: string, env: Record<string, string>): void => {
      exits.set(label, AppProcess.run(env, { timeoutMs: SPAWN_TIMEOUT_MS }));
    };

    spawnRefusal('configuration', {
      ...baseEnv(stateDir('configuration')),
      LEAF_WORKER_ID: '5000',
      LEAF_DB_URL: 'foo',
    });

    spawnRefusal('zk-no-state', unreachableEnv(stateDir('zk-no-state'), 1101));

    // Production on the embedded defaults: both modes on, nothing configured.
    spawnRefusal('production-embedded', {
      ...baseEnv(stateDir('production-embedded')),
      LEAF_SEGMENT_ENABLED: 'true',
      NODE_ENV: 'production',
    });

    await writeRawWorkerState(stateDir('zk-corrupt'), zkIdentity(1102), '{"version":1,"name":');
    spawnRefusal('zk-corrupt', unreachableEnv(stateDir('zk-corrupt'), 1102));

    await writeWorkerState(stateDir('zk-ahead'), zkIdentity(1104), {
      workerId: 9,
      zkNode: `/snowflake/${NAME}/forever/127.0.0.1:1104-0000000009`,
      reservedUntil: now + HOUR,
    });
    spawnRefusal('zk-ahead', {
      ...unreachableEnv(stateDir('zk-ahead'), 1104),
      LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS: '500',
    });

    // The file lies where 127.0.0.1:1105's belongs, but was written by another instance.
    await writeWorkerState(stateDir('zk-other-identity'), zkIdentity(1105), {
      identity: '10.1.2.3:8080',
      workerId: 4,
      zkNode: `/snowflake/${NAME}/forever/10.1.2.3:8080-0000000004`,
      reservedUntil: now - 1000,
    });
    spawnRefusal('zk-other-identity', unreachableEnv(stateDir('zk-other-identity'), 1105));

    // Valid, lease passed, but its last ZooKeeper write is older than localRunwayMs (60 s by
    // default): extending the lease locally now would pass what ZooKeeper's node vouches for.
    await writeWorkerState(stateDir('zk-runway'), zkIdentity(1106), {
      workerId: 6,
      zkNode: `/snowflake/${NAME}/forever/127.0.0.1:1106-0000000006`,
      reservedUntil: now - 1000,
      zkSyncedAt: now - 2 * 60_000,
    });
    spawnRefusal('zk-runway', unreachableEnv(stateDir('zk-runway'), 1106));

    await writeWorkerState(stateDir('embedded-ahead'), embeddedIdentity(7), {
      reservedUntil: now + HOUR,
    });
    spawnRefusal('embedded-ahead', {
      ...baseEnv(stateDir('embedded-ahead')),
      LEAF_WORKER_ID: '7',
      LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS: '500',
    });

    // The file of worker 4, where worker 3's belongs.
    await writeWorkerState(stateDir('embedded-other-worker'), embeddedIdentity(3), {
      workerId: 4,
      reservedUntil: now - 1000,
    });
    spawnRefusal('embedded-other-worker', {
      ...baseEnv(stateDir('embedded-other-worker')),
      LEAF_WORKER_ID: '3',
    });

    // The one that must start: ZooKeeper down, a valid state file whose lease has passed.
    cachedState = {
      workerId: 5,
      file: await writeWorkerState(stateDir('zk-cached'), zkIdentity(1103), {
        workerId: 5,
        zkNode: `/snowflake/${NAME}/forever/127.0.0.1:1103-0000000005`,
        reservedUntil: now - 1000,
        zkSyncedAt: now - 5000,
      }),
    };
    cached = AppProcess.spawn(unreachableEnv(stateDir('zk-cached'), 1103), {
      timeoutMs: SPAWN_TIMEOUT_MS,
    });
  });

  afterAll(async () => {
    await killAllAppProcesses();
    dir?.remove();
  });

  const exitOf = (label: string): Promise<ProcessExit> => exits.get(label)!;

  it('invalid configuration: one LEAF_CONFIGURATION report listing every bad variable', async () => {
    const report = expectRefusal(await exitOf('configuration'), LeafErrorCode.CONFIGURATION);
    expect(report).toMatch(/^\s+- LEAF_WORKER_ID\b.*"5000"/m);
    expect(report).toMatch(/^\s+- LEAF_DB_URL\b.*"foo"/m);
  });

  it('NODE_ENV=production on the embedded defaults: refuses, naming the variables to set or opt in with', async () => {
    const report = expectRefusal(await exitOf('production-embedded'), LeafErrorCode.CONFIGURATION);
    expect(report).toMatch(
      /^\s+- NODE_ENV=production: segment mode .*LEAF_DB_URL=mysql:.*LEAF_DB_URL=sqlite:/m,
    );
    expect(report).toMatch(
      /^\s+- NODE_ENV=production: snowflake mode .*LEAF_ZK_ADDRESS.*LEAF_WORKER_ID=/m,
    );
  });

  it('ZooKeeper unreachable and no state file: LEAF_WORKER_ID_UNAVAILABLE', async () => {
    const report = expectRefusal(await exitOf('zk-no-state'), LeafErrorCode.WORKER_ID_UNAVAILABLE);
    expect(report).toContain(UNREACHABLE);
    expect(report).toContain(workerStateFileName(zkIdentity(1101)));
  });

  it('ZooKeeper unreachable and a corrupt state file: LEAF_WORKER_STATE_CORRUPT', async () => {
    const report = expectRefusal(await exitOf('zk-corrupt'), LeafErrorCode.WORKER_STATE_CORRUPT);
    expect(report).toContain(workerStateFileName(zkIdentity(1102)));
    expect(report).toMatch(/not valid JSON/);
  });

  it('ZooKeeper unreachable and a valid state file whose lease has passed: starts from the file', async () => {
    const port = await cached.listening();
    const client = new HttpClient(`http://127.0.0.1:${port}`, 1);
    let issued = '';
    try {
      const answer = await client.send('/api/snowflake/get/startup');
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 200,
        body: expect.stringMatching(/^\d+$/),
      });
      expect(layout.decode(answer.body).workerId).toBe(cachedState.workerId);
      expect(layout.decode(answer.body).timestamp).toBeGreaterThan(Date.now() - 60_000);
      issued = answer.body;
    } finally {
      client.close();
    }
    // It says that it used the local state, and why.
    expect(cached.stdout + cached.stderr).toMatch(
      new RegExp(
        `${UNREACHABLE} is unreachable.*starting worker ${cachedState.workerId} from .*${workerStateFileName(zkIdentity(1103)).replace(/\./g, '\\.')}`,
      ),
    );
    const exit = await cached.stop('SIGTERM');
    // A graceful stop: the app closes and the process ends by itself, exit code 0.
    expect({ code: exit.code, signal: exit.signal, timedOut: exit.timedOut }).toEqual({
      code: 0,
      signal: null,
      timedOut: false,
    });
    expect(exit.stderr).not.toContain('Leaf failed to start');
    // The lease it used was recorded locally (ZooKeeper is still unreachable).
    const state = JSON.parse(await fs.readFile(cachedState.file, 'utf8')) as WorkerState;
    expect(state).toMatchObject({ workerId: cachedState.workerId, identity: '127.0.0.1:1103' });
    expect(state.reservedUntil).toBeGreaterThanOrEqual(layout.decode(issued).timestamp);
  });

  it('ZooKeeper unreachable and a state file leased an hour ahead: LEAF_STARTUP_CLOCK_BEHIND', async () => {
    const exit = await exitOf('zk-ahead');
    const report = expectRefusal(exit, LeafErrorCode.STARTUP_CLOCK_BEHIND);
    expect(report).toMatch(/Snowflake worker 9 refuses to start/);
    expect(report).toContain('(500 ms)');
  });

  it('ZooKeeper unreachable and the state file of another instance: refused (LEAF_WORKER_STATE_CORRUPT)', async () => {
    const report = expectRefusal(
      await exitOf('zk-other-identity'),
      LeafErrorCode.WORKER_STATE_CORRUPT,
    );
    expect(report).toMatch(/belongs to .*10\.1\.2\.3:8080/);
  });

  it('ZooKeeper unreachable and a state file last synced to ZooKeeper beyond the local runway: LEAF_TIME_LEASE_UNAVAILABLE', async () => {
    const report = expectRefusal(await exitOf('zk-runway'), LeafErrorCode.TIME_LEASE_UNAVAILABLE);
    expect(report).toMatch(/Snowflake worker 6\b.*localRunwayMs/);
  });

  it('embedded mode with a state file leased an hour ahead: LEAF_STARTUP_CLOCK_BEHIND', async () => {
    const report = expectRefusal(
      await exitOf('embedded-ahead'),
      LeafErrorCode.STARTUP_CLOCK_BEHIND,
    );
    expect(report).toMatch(/Snowflake worker 7 refuses to start/);
  });

  it('embedded mode with the state file of another worker ID: refused (LEAF_WORKER_STATE_CORRUPT)', async () => {
    const report = expectRefusal(
      await exitOf('embedded-other-worker'),
      LeafErrorCode.WORKER_STATE_CORRUPT,
    );
    expect(report).toMatch(/worker ID 4, not the configured 3/);
  });
});

describeWithServices(['zookeeper'], 'start-up against a full ZooKeeper namespace', () => {
  let admin: ZookeeperClient;
  let dir: ReturnType<typeof tempDir>;
  const name = `${NAME}-full`;

  beforeAll(async () => {
    admin = await connectZookeeperAdmin();
    dir = tempDir('leaf-startup-full');
  });

  afterAll(async () => {
    await killAllAppProcesses();
    await deleteTree(admin, `/snowflake/${name}`);
    await admin?.close();
    dir?.remove();
  });

  it('a namespace at sequence 1023 refuses the next new instance: LEAF_WORKER_ID_EXHAUSTED, with reclaim off and when nothing becomes reclaimable', async () => {
    // 1024 other instances took sequences 0..1023: the next new nodes get 1024, 1025.
    // Their nodes hold no lease anyone can judge ('{}'), so none is ever reclaimable.
    await fillSequence(admin, `/snowflake/${name}/forever`, 1024);
    const env = (port: number, extra: Record<string, string>) => ({
      ...baseEnv(join(dir.path, String(port))),
      LEAF_NAME: name,
      LEAF_ZK_ADDRESS: zookeeperConnectString(),
      LEAF_SNOWFLAKE_ADVERTISE: `127.0.0.1:${port}`,
      ...extra,
    });
    // One after the other, so each one's node number is known.
    const never = await AppProcess.run(env(1201, { LEAF_SNOWFLAKE_RECLAIM: 'never' }), {
      timeoutMs: SPAWN_TIMEOUT_MS,
    });
    // The default reclaim mode (when-exhausted) scans for gone instances up to the start-up
    // wait, shortened here, then refuses.
    const defaultReclaim = await AppProcess.run(
      env(1202, { LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS: '1000' }),
      { timeoutMs: SPAWN_TIMEOUT_MS },
    );
    const report = expectRefusal(never, LeafErrorCode.WORKER_ID_EXHAUSTED);
    expect(report).toMatch(/127\.0\.0\.1:1201-0000001024/);
    // It says what to do.
    expect(report).toContain('LEAF_SNOWFLAKE_ADVERTISE');
    const waited = expectRefusal(defaultReclaim, LeafErrorCode.WORKER_ID_EXHAUSTED);
    expect(waited).toMatch(/127\.0\.0\.1:1202-0000001025/);
    expect(waited).toMatch(
      /none of them became reclaimable within the start-up wait \(reclaim: when-exhausted\)/,
    );
  });
});
