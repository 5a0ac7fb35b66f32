/**
 * Snowflake safety with real processes against a real ZooKeeper (docs/design.md,
 * "Snowflake safety"): an instance paused past its session timeout (SIGSTOP/SIGCONT), and one
 * killed with kill -9, each with a second process of the same identity trying to take over.
 * Every ID both processes return is recorded; none may repeat, and the milliseconds the two
 * issued in must not overlap. The cut-off cases: snowflake-takeover-cut.e2e-spec.ts (the two
 * files run in parallel).
 *
 * Times are kept short with LEAF_ZK_SESSION_TIMEOUT_MS=4000 and small runways.
 */
import { LeafErrorCode } from 'nestjs-leaf';
import { eventually } from '@app/leaf/testing/eventually';
import { AppProcess } from '../support/app-process';
import { duplicatesAmong, IdLoad, sleep } from '../support/id-load';
import { describeWithServices, zookeeperConnectString } from '../support/services';
import { expectDisjoint, takeoverHarness } from '../support/takeover';

describeWithServices(
  ['zookeeper'],
  'snowflake takeover by a second process of the same identity (paused, killed)',
  () => {
    const h = takeoverHarness();

    it('paused past its session timeout on a shared state directory: the second process refuses (state lock), the first resumes alone', async () => {
      const name = h.namespace();
      const dir = h.stateDir();
      const a = await h.startServing(h.env(name, zookeeperConnectString(), dir, 8000));
      await sleep(1500);
      a.app.signal('SIGSTOP');
      await h.aliveNodeGone(name);
      const b = await AppProcess.run(h.env(name, zookeeperConnectString(), dir, 8000), {
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
      const name = h.namespace();
      // The first process has the longer runway: the second must wait for the first's, not its
      // own. 12 s: the first's horizon is still ahead once its session has expired (4-6 s after
      // the pause) and the second has started, on a machine busy with other suites.
      const a = await h.startServing(h.env(name, zookeeperConnectString(), h.stateDir(), 12_000));
      await sleep(1500);
      a.app.signal('SIGSTOP');
      const pausedAt = Date.now();
      await h.aliveNodeGone(name);
      // The first's horizon as it wrote it last (paused, it writes no more).
      const [node] = await h.admin().getChildren(`/snowflake/${name}/forever`);
      const { data: written } = await h.admin().getData(`/snowflake/${name}/forever/${node}`);
      const horizon = (JSON.parse(written.toString()) as { horizon: number }).horizon;
      expect(horizon).toBeGreaterThan(pausedAt);
      const bApp = AppProcess.spawn(h.env(name, zookeeperConnectString(), h.stateDir(), 2000), {
        timeoutMs: 120_000,
      });
      // Resumed once the second holds the liveness node and waits past the first's horizon.
      await eventually(
        async () => {
          const { data } = await h.admin().getData(`/snowflake/${name}/alive/0`);
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
      // The second issued nothing up to the first's horizon: it waited past it (its log says
      // so, unless its own start-up on a busy machine already ended later than that).
      expect(bLoad.timestampRange()!.min).toBeGreaterThan(horizon);
      // The first one stopped issuing: its last answers are typed 503s.
      const last = a.load.answers.at(-1)!;
      expect(last).toMatchObject({ status: 503, code: LeafErrorCode.TIME_LEASE_UNAVAILABLE });
      expect(bLoad.summary()['200']).toBeGreaterThan(0);
    }, 90_000);

    it('after kill -9, a restart on the same state directory is not held up by the dead lock', async () => {
      const name = h.namespace();
      const dir = h.stateDir();
      const a = await h.startServing(h.env(name, zookeeperConnectString(), dir, 8000));
      await sleep(500);
      a.app.signal('SIGKILL');
      await a.app.exited;
      await a.load.stop();
      const b = await h.startServing(h.env(name, zookeeperConnectString(), dir, 8000));
      await sleep(500);
      await b.load.stop();
      expectDisjoint(a.load, b.load);
      expect(b.app.stdout).toMatch(/this host's previous run, has ended/);
    }, 60_000);
  },
);
