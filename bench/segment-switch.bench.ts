/**
 * Tail latency at a segment switch (`npm run bench:switch`; a module of `npm run bench`):
 * p99.9 of `await SegmentService.get(tag)` at a fixed call rate with a small step (1,000:
 * a switch every 1,000 IDs, each needing a range from the database) against the same rate
 * with a step of 1,000,000 (no switch during the run), in the same run.
 *
 * Against MariaDB (a throw-away database on `LEAF_TEST_MYSQL_URL`'s server), because that
 * is where a range costs a network round trip and a transaction; SQLite's in-process
 * allocation would hide the very cost measured. In process rather than over HTTP: the
 * switch is inside the library, and the HTTP stack's own tail on a small machine (the bare
 * route's p99.9 is several milliseconds) would drown a one-millisecond round trip. `maxStep`
 * is set to the small step so Leaf's dynamic step cannot grow it (docs/design.md, segment
 * mode); the large tag's row step is above it and wins.
 *
 * The claim checked: the next range is loaded in the background once 10 % of the current
 * one is used, so no call waits for the database at a switch — the small step adds less than
 * a millisecond at p99.9.
 *
 * Options: `BENCH_RATE` (2000 calls/s), `BENCH_SECONDS` (each run lasts twice that, at least
 * 2 s; once that when quick), `--quick`.
 */
import { type SegmentService } from 'nestjs-leaf';
import { MysqlLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import { fixedRateCalls, type FixedRateResult } from './support/http-load';
import { fmt, ms, type BenchContext, type BenchModule } from './support/report';
import { runAlone } from './support/run';
import { openSegmentModule, withBenchDatabase } from './support/segment-module';

const SMALL = 1_000;
const LARGE = 1_000_000;

const latencyCell = (r: FixedRateResult): string =>
  `p99.9 ${ms(r.p999Ms)} (p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}, max ${ms(r.maxMs)})`;

async function run(
  context: BenchContext,
  segments: SegmentService,
  tag: string,
  durationSec: number,
): Promise<{ result: FixedRateResult; loads: number }> {
  const loadsBefore = segments.snapshot().buffers.find((b) => b.tag === tag)?.loads ?? 0;
  const result = await fixedRateCalls(() => segments.get(tag).then(() => true), {
    rate: context.rate,
    durationSec,
  });
  const loads = (segments.snapshot().buffers.find((b) => b.tag === tag)?.loads ?? 0) - loadsBefore;
  context.log(
    `${tag}: ${result.sent} calls at ${fmt(context.rate)}/s, ${result.failed} failed, ` +
      `${loads} ranges loaded; ${latencyCell(result)}`,
  );
  if (result.failed > 0) throw new Error(`${tag}: ${result.failed} calls failed`);
  return { result, loads };
}

/** p99.9 at a segment switch: step 1,000 against step 1,000,000 at the same rate. */
export const bench: BenchModule = {
  name: 'segment-switch',
  title: 'Segment switch (MariaDB)',
  run(context) {
    const durationSec = context.quick ? context.seconds : Math.max(2, context.seconds * 2);
    return withBenchDatabase({ small: SMALL, large: LARGE }, async (_db, dataSource) => {
      const leaf = await openSegmentModule({
        store: new MysqlLeafAllocStore(dataSource),
        maxStep: SMALL,
        warmTags: ['small', 'large'],
      });
      try {
        // Warm-up: JIT of the call path and the first preloads of both tags.
        for (const tag of ['large', 'small']) {
          await fixedRateCalls(() => leaf.segments.get(tag).then(() => true), {
            rate: context.rate,
            durationSec: 0.5,
          });
        }
        const large = await run(context, leaf.segments, 'large', durationSec);
        const small = await run(context, leaf.segments, 'small', durationSec);
        const added = small.result.p999Ms - large.result.p999Ms;
        return [
          {
            measurement:
              `\`await get(tag)\` at ${fmt(context.rate)} calls/s for ${durationSec} s, ` +
              `step ${fmt(SMALL)} (${small.loads} switches)`,
            figure: latencyCell(small.result),
            baseline: `step ${fmt(LARGE)} (${large.loads} switches): ${latencyCell(large.result)}`,
            ratio: `p99.9 ${added >= 0 ? '+' : '−'}${ms(Math.abs(added))}`,
            target: 'p99.9 within 1 ms of the step-1,000,000 run',
            met: added <= 1,
          },
        ];
      } finally {
        await leaf.close();
      }
    });
  },
};

if (require.main === module) runAlone(bench);
