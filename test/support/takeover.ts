/**
 * What the snowflake takeover specs share (test/system/snowflake-takeover*.e2e-spec.ts, in the CI stage of the fault matrix): real
 * application processes of one identity on the shared ZooKeeper, each run in a namespace and
 * state directories of its own, with a load recording every ID.
 *
 * Times are kept short with LEAF_ZK_SESSION_TIMEOUT_MS=4000 and small runways.
 */
import { randomBytes } from 'node:crypto';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { eventually } from '@app/leaf/testing/eventually';
import { tempDir } from './app';
import { AppProcess, killAllAppProcesses } from './app-process';
import { duplicatesAmong, IdLoad } from './id-load';
import { connectZookeeperAdmin, deleteTree } from './zookeeper';

export const SESSION_TIMEOUT_MS = 4000;
export const IDENTITY = '127.0.0.1:18999';

/** The helpers of {@link takeoverHarness}. */
export interface TakeoverHarness {
  /** The admin client (connected in `beforeAll`). */
  admin(): ZookeeperClient;
  /** A new namespace, deleted after the spec. */
  namespace(): string;
  /** A new state directory, removed after the spec. */
  stateDir(): string;
  /** The environment of an instance of {@link IDENTITY} in `name` on ZooKeeper `zk`. */
  env(
    name: string,
    zk: string,
    dir: string,
    runwayMs: number,
    extra?: Record<string, string>,
  ): Record<string, string>;
  /** Starts a process and, once it listens, a load on it. */
  startServing(appEnv: Record<string, string>): Promise<{ app: AppProcess; load: IdLoad }>;
  /** Resolves once ZooKeeper has deleted the liveness node of worker 0 (its session ended). */
  aliveNodeGone(name: string): Promise<void>;
}

/**
 * Registers the spec's hooks (admin client, processes killed after each test, namespaces and
 * directories removed at the end) and returns the helpers. Call inside the `describe`.
 */
export function takeoverHarness(): TakeoverHarness {
  let admin: ZookeeperClient;
  const namespaces: string[] = [];
  const dirs: Array<{ remove(): void }> = [];

  beforeAll(async () => {
    admin = await connectZookeeperAdmin();
  });
  afterEach(async () => {
    await killAllAppProcesses();
  });
  afterAll(async () => {
    for (const name of namespaces) await deleteTree(admin, `/snowflake/${name}`);
    await admin.close();
    for (const dir of dirs) dir.remove();
  });

  return {
    admin: () => admin,
    namespace() {
      const name = `e2e-takeover-${randomBytes(4).toString('hex')}`;
      namespaces.push(name);
      return name;
    },
    stateDir() {
      const dir = tempDir('leaf-takeover');
      dirs.push(dir);
      return dir.path;
    },
    env(name, zk, dir, runwayMs, extra = {}) {
      return {
        PORT: '0',
        HOST: '127.0.0.1',
        LEAF_SEGMENT_ENABLED: 'false',
        LEAF_NAME: name,
        LEAF_ZK_ADDRESS: zk,
        LEAF_ZK_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
        // Long enough for a first session on a busy machine; a cut-off start still fails in time.
        LEAF_ZK_CONNECT_TIMEOUT_MS: '5000',
        LEAF_SNOWFLAKE_ADVERTISE: IDENTITY,
        LEAF_STATE_DIR: dir,
        LEAF_SNOWFLAKE_LOCAL_RUNWAY_MS: String(runwayMs),
        LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS: '60000',
        ...extra,
      };
    },
    async startServing(appEnv) {
      const app = AppProcess.spawn(appEnv, { timeoutMs: 120_000 });
      const port = await app.listening();
      return { app, load: new IdLoad(port) };
    },
    async aliveNodeGone(name) {
      await eventually(
        async () => {
          await expect(admin.getData(`/snowflake/${name}/alive/0`)).rejects.toMatchObject({
            zkCode: 'NO_NODE',
          });
        },
        3 * SESSION_TIMEOUT_MS,
        100,
      );
    },
  };
}

/** Zero repeats, and the two never issued in the same millisecond. */
export function expectDisjoint(first: IdLoad, second: IdLoad): void {
  expect(duplicatesAmong(first.ids, second.ids)).toEqual([]);
  const a = first.timestampRange();
  const b = second.timestampRange();
  expect(a).not.toBeNull();
  expect(b).not.toBeNull();
  expect(a!.max).toBeLessThan(b!.min);
}
