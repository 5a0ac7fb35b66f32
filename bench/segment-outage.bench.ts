/**
 * Database-outage runway (`npm run bench:outage`; a module of `npm run bench`): how long
 * segment mode keeps issuing IDs with the database unreachable, at a given call rate and
 * step, against the runway the IDs in memory promise at the moment of the cut.
 *
 * The library runs in this process on a throw-away MariaDB database, reached through a TCP
 * proxy (test/support/tcp-proxy.ts) that cuts every connection and refuses new ones: the
 * database becomes unreachable without touching the shared server. IDs are asked for at a
 * fixed rate (`await SegmentService.get(tag)`); once the next range has been preloaded, the
 * proxy cuts. The run goes on until the first error, which ends the runway. Expected: the
 * IDs in memory at the cut (rest of the current range + the whole next one, as the
 * snapshot shows them) ÷ the rate. Then the proxy is restored and the time to the next ID
 * measured (recovery without a restart). `maxStep` is the step, so Leaf's dynamic step
 * cannot grow it (docs/design.md, segment mode).
 *
 * Options: `BENCH_RATE` (2000 calls/s), `BENCH_OUTAGE_STEP` (10,000; 1,000 when quick),
 * `--quick`.
 */
import { LeafError } from 'nestjs-leaf';
import { MysqlLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import { MYSQL_SERVER_URL } from '../test/support/test-database';
import { TcpProxy } from '../test/support/tcp-proxy';
import { fixedRateCalls } from './support/http-load';
import { fmt, type BenchModule } from './support/report';
import { runAlone } from './support/run';
import { openSegmentModule, withBenchDatabase } from './support/segment-module';

const TAG = 'outage';
/** Bound on waiting for the preload before the cut, and for recovery after it. */
const WAIT_MS = 10_000;

const seconds = (valueMs: number): string => `${(valueMs / 1000).toFixed(2)} s`;

/** Runway with the database cut off, against the IDs in memory at the cut. */
export const bench: BenchModule = {
  name: 'segment-outage',
  title: 'Database outage (MariaDB)',
  async run(context) {
    const step = Number(process.env.BENCH_OUTAGE_STEP ?? (context.quick ? 1_000 : 10_000));
    const { rate } = context;
    const server = new URL(MYSQL_SERVER_URL);
    const proxy = new TcpProxy({ host: server.hostname, port: Number(server.port || 3306) });
    await proxy.start();
    try {
      return await withBenchDatabase(
        { [TAG]: step },
        async (_db, dataSource) => {
          const leaf = await openSegmentModule({
            store: new MysqlLeafAllocStore(dataSource),
            maxStep: step,
            warmTags: [TAG],
          });
          const { segments } = leaf;
          let cutAt: number | null = null;
          let idleAtCut = 0;
          let firstError: { at: number; code: string } | null = null;
          let readinessDownAt: number | null = null;
          const buffer = () => segments.snapshot().buffers.find((b) => b.tag === TAG);
          // Cuts once the next range is in memory, then watches readiness.
          const watcher = setInterval(() => {
            const now = Date.now();
            if (cutAt === null) {
              const snapshot = buffer();
              if (snapshot?.next && snapshot.current) {
                proxy.refuse(true);
                cutAt = now;
                idleAtCut = Number(snapshot.current.idle) + Number(snapshot.next.idle);
              }
            } else if (readinessDownAt === null && !segments.readiness().ready) {
              readinessDownAt = now;
            }
          }, 5);
          try {
            // Long enough for the preload, the whole runway and a margin; ends at the first error.
            const bound = (WAIT_MS + (2 * step * 1000) / rate + 5_000) / 1000;
            const calls = await fixedRateCalls(
              () =>
                segments.get(TAG).then(
                  () => true,
                  (error: unknown) => {
                    firstError ??= {
                      at: Date.now(),
                      code: error instanceof LeafError ? error.code : String(error),
                    };
                    return false;
                  },
                ),
              { rate, durationSec: bound, stop: () => firstError !== null },
            );
            clearInterval(watcher);
            if (cutAt === null) throw new Error('the next range was never preloaded');
            if (firstError === null) throw new Error(`no error within ${bound} s of the cut`);
            const { at, code } = firstError as { at: number; code: string };
            const runwayMs = at - cutAt;
            const expectedMs = (idleAtCut * 1000) / rate;

            proxy.refuse(false);
            const restoredAt = Date.now();
            let recoveredAt: number | null = null;
            while (recoveredAt === null && Date.now() - restoredAt < WAIT_MS) {
              try {
                await segments.get(TAG);
                recoveredAt = Date.now();
              } catch {
                await new Promise((resolve) => setTimeout(resolve, 20));
              }
            }
            context.log(
              `step ${step}, ${fmt(rate)} calls/s (${calls.sent} calls): ${fmt(idleAtCut)} IDs in memory ` +
                `at the cut = ${seconds(expectedMs)}; first error ${code} after ${seconds(runwayMs)}; ` +
                `readiness down ${readinessDownAt === null ? 'never' : `after ${seconds(readinessDownAt - cutAt)}`}; ` +
                `recovered ${recoveredAt === null ? 'never' : `${recoveredAt - restoredAt} ms`} after the restore`,
            );
            const ratio = runwayMs / expectedMs;
            return [
              {
                measurement: `runway with the database unreachable, ${fmt(rate)} IDs/s, step ${fmt(step)}`,
                figure: `${seconds(runwayMs)} until the first error (${code})`,
                baseline: `${fmt(idleAtCut)} IDs in memory at the cut = ${seconds(expectedMs)}`,
                ratio: `**${(ratio * 100).toFixed(1)} %**`,
                target: '≥ 95 %',
                met: ratio >= 0.95,
              },
              {
                measurement:
                  'readiness down before the first error; recovery once the database is back',
                figure:
                  `readiness down ${readinessDownAt === null ? 'never' : `${seconds(at - readinessDownAt)} before`}; ` +
                  `next ID ${recoveredAt === null ? 'not within 10 s' : `${recoveredAt - restoredAt} ms`} after the restore`,
                baseline: '—',
                ratio: '—',
                target: 'recovery without a restart',
                met: recoveredAt !== null,
              },
            ];
          } finally {
            clearInterval(watcher);
            proxy.refuse(false);
            await leaf.close();
          }
        },
        {
          url: (url) => {
            const viaProxy = new URL(url);
            viaProxy.hostname = '127.0.0.1';
            viaProxy.port = String(proxy.port);
            return viaProxy.toString();
          },
        },
      );
    } finally {
      await proxy.stop();
    }
  },
};

if (require.main === module) runAlone(bench);
