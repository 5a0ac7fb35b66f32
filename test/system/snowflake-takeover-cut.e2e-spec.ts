/**
 * Snowflake safety with real processes against a real ZooKeeper (docs/design.md,
 * "Snowflake safety"): an instance cut off from ZooKeeper by a TCP proxy while it keeps
 * serving HTTP, and a ZooKeeper outage, each with a second process of the same identity
 * trying to take over. Every ID both processes return is recorded; none may repeat, and the
 * milliseconds the two issued in must not overlap. The paused and killed cases:
 * snowflake-takeover.e2e-spec.ts (the two files run in parallel).
 *
 * Times are kept short with LEAF_ZK_SESSION_TIMEOUT_MS=4000 and small runways.
 */
import { LeafErrorCode } from 'nestjs-leaf';
import { AppProcess } from '../support/app-process';
import { duplicatesAmong, IdLoad, sleep } from '../support/id-load';
import {
  describeWithServices,
  zookeeperConnectString,
  zookeeperEndpoint,
} from '../support/services';
import { TcpProxy } from '../support/tcp-proxy';
import { expectDisjoint, takeoverHarness } from '../support/takeover';

/**
 * The first process's start, before any cut: on a machine busy with the other suites (the
 * fault matrix starts private ZooKeeper and database servers alongside) a first session
 * through the proxy may take longer than the harness's 5 s — 15 s once in CI — which would fail
 * the start and say nothing about the cut.
 */
const FIRST_START = { LEAF_ZK_CONNECT_TIMEOUT_MS: '40000' };

describeWithServices(
  ['zookeeper'],
  'snowflake takeover by a second process of the same identity (cut off from ZooKeeper)',
  () => {
    const h = takeoverHarness();

    describe.each([
      { title: 'equal runways', aRunwayMs: 9000, bRunwayMs: 9000 },
      { title: "the first's runway longer than the second's", aRunwayMs: 12_000, bRunwayMs: 2000 },
    ])('cut off from ZooKeeper, still serving HTTP ($title)', ({ aRunwayMs, bRunwayMs }) => {
      it('the first serves from its runway and stops at its horizon; the second starts only past it', async () => {
        const name = h.namespace();
        const proxy = new TcpProxy(zookeeperEndpoint());
        await proxy.start();
        try {
          const a = await h.startServing(
            h.env(name, `127.0.0.1:${proxy.port}`, h.stateDir(), aRunwayMs, FIRST_START),
          );
          await sleep(1000);
          const cutAt = Date.now();
          proxy.refuse(true);
          await h.aliveNodeGone(name); // its session expired on the server; it does not know
          const bApp = AppProcess.spawn(
            h.env(name, zookeeperConnectString(), h.stateDir(), bRunwayMs),
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
      }, 120_000);
    });

    it('ZooKeeper unreachable for everyone: the first serves on its runway, no second process can start', async () => {
      const name = h.namespace();
      const dir = h.stateDir();
      const proxy = new TcpProxy(zookeeperEndpoint());
      await proxy.start();
      try {
        const zk = `127.0.0.1:${proxy.port}`;
        // The outage lasts until both refused starts have exited (each bounded by 30 s, a few
        // seconds on an idle machine, longer beside the other suites): the runway outlasts that.
        const a = await h.startServing(h.env(name, zk, dir, 40_000, FIRST_START));
        await sleep(1000);
        const cutAt = Date.now();
        proxy.refuse(true);
        const [sameDir, otherDir] = await Promise.all([
          AppProcess.run(h.env(name, zk, dir, 20_000), { timeoutMs: 30_000 }),
          AppProcess.run(h.env(name, zk, h.stateDir(), 20_000), { timeoutMs: 30_000 }),
        ]);
        expect(sameDir.code).toBe(1);
        expect(sameDir.stderr).toContain(`[${LeafErrorCode.WORKER_STATE_LOCKED}]`);
        expect(otherDir.code).toBe(1);
        expect(otherDir.stderr).toContain(`[${LeafErrorCode.WORKER_ID_UNAVAILABLE}]`);
        await sleep(Math.max(0, cutAt + 8000 - Date.now()));
        proxy.refuse(false);
        console.log(`[takeover-cut] ZooKeeper unreachable for ${Date.now() - cutAt} ms`);
        await sleep(2000);
        await a.load.stop();
        expect(duplicatesAmong(a.load.ids)).toEqual([]);
        // Served throughout: the outage stayed within the runway.
        expect(a.load.summary()).toEqual({ '200': a.load.answers.length });
        expect(a.load.answers.filter((x) => x.at > cutAt + 7000).length).toBeGreaterThan(0);
      } finally {
        await proxy.stop();
      }
    }, 120_000);
  },
);
