/**
 * Snowflake safety with real processes against a real ZooKeeper (docs/design.md,
 * "Snowflake safety"): an instance paused past its session timeout (SIGSTOP/SIGCONT), an
 * instance cut off from ZooKeeper by a TCP proxy while it keeps serving HTTP, and a
 * ZooKeeper outage, each with a second process of the same identity trying to take over.
 * Every ID both processes return is recorded; none may repeat, and the milliseconds the
 * two issued in must not overlap.
 *
 * Times are kept short with LEAF_ZK_SESSION_TIMEOUT_MS=4000 and small runways.
 */
import { randomBytes } from 'node:crypto';
import { LeafErrorCode } from 'nestjs-leaf';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { eventually } from '@app/leaf/testing/eventually';
import { tempDir } from './support/app';
import { AppProcess, killAllAppProcesses } from './support/app-process';
import { duplicatesAmong, IdLoad, sleep } from './support/id-load';
import {
  describeWithServices,
  zookeeperConnectString,
  zookeeperEndpoint,
} from './support/services';
import { TcpProxy } from './support/tcp-proxy';
import { connectZookeeperAdmin, deleteTree } from './support/zookeeper';

const SESSION_TIMEOUT_MS = 4000;
const IDENTITY = '127.0.0.1:18999';

describeWithServices(
  ['zookeeper'],
  'snowflake takeover by a second process of the same identity',
  () => {
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

    function namespace(): string {
      const name = `e2e-takeover-${randomBytes(4).toString('hex')}`;
      namespaces.push(name);
      return name;
    }

    function stateDir(): string {
      const dir = tempDir('leaf-takeover');
      dirs.push(dir);
      return dir.path;
    }

    function env(
      name: string,
      zk: string,
      dir: string,
      runwayMs: number,
      extra: Record<string, string> = {},
    ): Record<string, string> {
      return {
        PORT: '0',
        HOST: '127.0.0.1',
        LEAF_SEGMENT_ENABLED: 'false',
        LEAF_NAME: name,
        LEAF_ZK_ADDRESS: zk,
        LEAF_ZK_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
        LEAF_ZK_CONNECT_TIMEOUT_MS: '2000',
        LEAF_SNOWFLAKE_ADVERTISE: IDENTITY,
        LEAF_STATE_DIR: dir,
        LEAF_SNOWFLAKE_LOCAL_RUNWAY_MS: String(runwayMs),
        LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS: '60000',
        ...extra,
      };
    }

    async function startServing(appEnv: Record<string, string>): Promise<{
      app: AppProcess;
      load: IdLoad;
    }> {
      const app = AppProcess.spawn(appEnv, { timeoutMs: 120_000 });
      const port = await app.listening();
      return { app, load: new IdLoad(port) };
    }

    /** Resolves once ZooKeeper has deleted the liveness node of worker 0 (its session ended). */
    async function aliveNodeGone(name: string): Promise<void> {
      await eventually(
        async () => {
          await expect(admin.getData(`/snowflake/${name}/alive/0`)).rejects.toMatchObject({
            zkCode: 'NO_NODE',
          });
        },
        3 * SESSION_TIMEOUT_MS,
        100,
      );
    }

    /** Zero repeats, and the two never issued in the same millisecond. */
    function expectDisjoint(first: IdLoad, second: IdLoad): void {
      expect(duplicatesAmong(first.ids, second.ids)).toEqual([]);
      const a = first.timestampRange();
      const b = second.timestampRange();
      expect(a).not.toBeNull();
      expect(b).not.toBeNull();
      expect(a!.max).toBeLessThan(b!.min);
    }

    it('paused past its session timeout on a shared state directory: the second process refuses (state lock), the first resumes alone', async () => {
      const name = namespace();
      const dir = stateDir();
      const a = await startServing(env(name, zookeeperConnectString(), dir, 8000));
      await sleep(1500);
      a.app.signal('SIGSTOP');
      await aliveNodeGone(name);
      const b = await AppProcess.run(env(name, zookeeperConnectString(), dir, 8000), {
        timeoutMs: 30_000,
      });
      a.app.signal('SIGCONT');
      expect(b.code).toBe(1);
      expect(b.stderr).toContain(`[${LeafErrorCode.WORKER_STATE_LOCKED}]`);
      // Back from the pause, the first process takes its liveness node again and goes on.
      const resumedAt = Date.now();
      await sleep(4000);
      await a.load.stop();
      expect(duplicatesAmong(a.load.ids)).toEqual([]);
      expect(
        a.load.answers.filter((x) => x.at > resumedAt + 3000).every((x) => x.status === 200),
      ).toBe(true);
      expect(a.app.stdout).toMatch(/Liveness node .* created for worker ID 0/);
    }, 60_000);

    it('paused past its session timeout while a second process with its own state directory takes over: no millisecond issued twice', async () => {
      const name = namespace();
      // The first process has the longer runway: the second must wait for the first's, not its own.
      const a = await startServing(env(name, zookeeperConnectString(), stateDir(), 8000));
      await sleep(1500);
      a.app.signal('SIGSTOP');
      await aliveNodeGone(name);
      const bApp = AppProcess.spawn(env(name, zookeeperConnectString(), stateDir(), 2000), {
        timeoutMs: 120_000,
      });
      // Resumed once the second holds the liveness node and waits past the first's horizon.
      await eventually(
        async () => {
          const { data } = await admin.getData(`/snowflake/${name}/alive/0`);
          expect(JSON.parse(data.toString())).toMatchObject({ pid: bApp.pid });
        },
        20_000,
        50,
      );
      a.app.signal('SIGCONT');
      const bPort = await bApp.listening();
      const bLoad = new IdLoad(bPort);
      await sleep(3000);
      await Promise.all([a.load.stop(), bLoad.stop()]);

      expectDisjoint(a.load, bLoad);
      expect(bApp.stdout).toMatch(/Waited \d+ ms for the clock to pass .*horizon/);
      // The first one stopped issuing: its last answers are typed 503s.
      const last = a.load.answers.at(-1)!;
      expect(last).toMatchObject({ status: 503, code: LeafErrorCode.TIME_LEASE_UNAVAILABLE });
      expect(bLoad.summary()['200']).toBeGreaterThan(0);
    }, 90_000);

    describe.each([
      { title: 'equal runways', aRunwayMs: 9000, bRunwayMs: 9000 },
      { title: "the first's runway longer than the second's", aRunwayMs: 12_000, bRunwayMs: 2000 },
    ])('cut off from ZooKeeper, still serving HTTP ($title)', ({ aRunwayMs, bRunwayMs }) => {
      it('the first serves from its runway and stops at its horizon; the second starts only past it', async () => {
        const name = namespace();
        const proxy = new TcpProxy(zookeeperEndpoint());
        await proxy.start();
        try {
          const a = await startServing(env(name, `127.0.0.1:${proxy.port}`, stateDir(), aRunwayMs));
          await sleep(1000);
          const cutAt = Date.now();
          proxy.refuse(true);
          await aliveNodeGone(name); // its session expired on the server; it does not know
          const bApp = AppProcess.spawn(
            env(name, zookeeperConnectString(), stateDir(), bRunwayMs),
            { timeoutMs: 120_000 },
          );
          const bPort = await bApp.listening();
          const bLoad = new IdLoad(bPort);
          await sleep(2000);
          await Promise.all([a.load.stop(), bLoad.stop()]);

          expectDisjoint(a.load, bLoad);
          // The first rode out the cut on its runway for a while, then answered typed 503s.
          const servedDuringCut = a.load.answers.filter(
            (x) => x.at > cutAt + 2000 && x.status === 200,
          );
          expect(servedDuringCut.length).toBeGreaterThan(0);
          expect(a.load.answers.at(-1)).toMatchObject({
            status: 503,
            code: LeafErrorCode.TIME_LEASE_UNAVAILABLE,
          });
          expect(a.load.lastOkAt()!).toBeLessThan(cutAt + aRunwayMs + 1000);
          expect(bLoad.summary()['200']).toBeGreaterThan(0);
        } finally {
          await proxy.stop();
        }
      }, 90_000);
    });

    it('ZooKeeper unreachable for everyone: the first serves on its runway, no second process can start', async () => {
      const name = namespace();
      const dir = stateDir();
      const proxy = new TcpProxy(zookeeperEndpoint());
      await proxy.start();
      try {
        const zk = `127.0.0.1:${proxy.port}`;
        const a = await startServing(env(name, zk, dir, 20_000));
        await sleep(1000);
        const cutAt = Date.now();
        proxy.refuse(true);
        const [sameDir, otherDir] = await Promise.all([
          AppProcess.run(env(name, zk, dir, 20_000), { timeoutMs: 30_000 }),
          AppProcess.run(env(name, zk, stateDir(), 20_000), { timeoutMs: 30_000 }),
        ]);
        expect(sameDir.code).toBe(1);
        expect(sameDir.stderr).toContain(`[${LeafErrorCode.WORKER_STATE_LOCKED}]`);
        expect(otherDir.code).toBe(1);
        expect(otherDir.stderr).toContain(`[${LeafErrorCode.WORKER_ID_UNAVAILABLE}]`);
        await sleep(Math.max(0, cutAt + 8000 - Date.now()));
        proxy.refuse(false);
        await sleep(2000);
        await a.load.stop();
        expect(duplicatesAmong(a.load.ids)).toEqual([]);
        // Served throughout: the outage stayed within the runway.
        expect(a.load.summary()).toEqual({ '200': a.load.answers.length });
        expect(a.load.answers.filter((x) => x.at > cutAt + 7000).length).toBeGreaterThan(0);
      } finally {
        await proxy.stop();
      }
    }, 60_000);

    it('after kill -9, a restart on the same state directory is not held up by the dead lock', async () => {
      const name = namespace();
      const dir = stateDir();
      const a = await startServing(env(name, zookeeperConnectString(), dir, 8000));
      await sleep(500);
      a.app.signal('SIGKILL');
      await a.app.exited;
      await a.load.stop();
      const b = await startServing(env(name, zookeeperConnectString(), dir, 8000));
      await sleep(500);
      await b.load.stop();
      expectDisjoint(a.load, b.load);
      expect(b.app.stdout).toMatch(/this host's previous run, has ended/);
    }, 60_000);
  },
);
