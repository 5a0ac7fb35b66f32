/**
 * Snowflake-mode benchmarks (`npm run bench:snowflake`; a module of `npm run bench`), each
 * against a baseline from the same run.
 *
 * 1. Sustained IDs per second of one generator (embedded worker, real clock, real time
 *    lease in a temp state dir) over `BENCH_SECONDS` (default 5) through `getIds(4096)` in a
 *    loop, as a fraction of the layout's limit (4,096,000/s) and of the limit reachable with
 *    Leaf's random sequence start (4096 − mean start per millisecond), while
 *    `monitorEventLoopDelay` records how long the event loop ever stalled (target ≤ 5 ms).
 *    Every ID is checked to be larger than the one before.
 * 2. HTTP `GET /api/snowflake/get/{key}` vs a bare Nest + Fastify route answering a
 *    constant (same adapter settings), each in its own process, for the application with
 *    its default configuration and with the access log on (bench/support/http-load.ts).
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Test } from '@nestjs/testing';
import { ScheduleModule } from '@nestjs/schedule';
import { LeafModule, SnowflakeService } from 'nestjs-leaf';
import {
  fmt,
  percentRow,
  plainRow,
  type BenchContext,
  type BenchModule,
  type BenchRow,
} from './support/report';
import { runAlone } from './support/run';
import { compareWithBaseline } from './support/http-load';

const LIMIT = 4_096_000;
const RANDOM_BOUND = 100;
const BATCH = 4096;

async function generator(context: BenchContext): Promise<BenchRow[]> {
  const { seconds, quick } = context;
  const stateDir = mkdtempSync(join(tmpdir(), 'leaf-bench-sf-'));
  const moduleRef = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      LeafModule.forRoot({
        segment: false,
        maxBatchSize: BATCH,
        snowflake: { workerId: 1, stateDir, sequenceRandomBound: RANDOM_BOUND },
      }),
    ],
  }).compile();
  await moduleRef.init();
  const snowflake = moduleRef.get(SnowflakeService);
  try {
    // Warm-up for a second: JIT, the first lease extensions, and the heap growing to its
    // steady size (its first scavenges promote start-up garbage and pause far longer than
    // the steady state's ~1 ms ones).
    const warmUntil = performance.now() + (quick ? 200 : 1000);
    while (performance.now() < warmUntil) await snowflake.getIds('bench', BATCH);
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    let issued = 0;
    let last = 0n;
    let ordered = true;
    const start = performance.now();
    const end = start + seconds * 1000;
    while (performance.now() < end) {
      const ids = await snowflake.getIds('bench', BATCH);
      if (ids[0] <= last) ordered = false;
      last = ids[ids.length - 1];
      issued += ids.length;
    }
    const elapsed = (performance.now() - start) / 1000;
    delay.disable();
    const rate = issued / elapsed;
    // Leaf starts each millisecond at a uniform random value in [0, bound): the mean start
    // (bound − 1) / 2 is lost every millisecond.
    const reachable = (4096 - (RANDOM_BOUND - 1) / 2) * 1000;
    const maxStallMs = delay.max / 1e6;
    context.log(
      `getIds(${BATCH}) in a loop for ${seconds} s: ${fmt(issued)} IDs in ${elapsed.toFixed(2)} s ` +
        `= ${fmt(rate)} IDs/s; every ID larger than the last: ${ordered}; event loop delay ` +
        `max ${maxStallMs.toFixed(2)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(2)} ms`,
    );
    if (!ordered) throw new Error('an ID was not larger than the one before');
    return [
      percentRow({
        measurement: `one generator, \`getIds(${BATCH})\` in a loop for ${seconds} s`,
        value: rate,
        figure: `${fmt(rate)} IDs/s`,
        baselineValue: reachable,
        baseline:
          `reachable limit ${fmt(reachable)}/s (layout limit ${fmt(LIMIT)}/s minus the mean ` +
          `random start of ${(RANDOM_BOUND - 1) / 2} per ms)`,
        min: 0.97,
      }),
      percentRow({
        measurement: 'same run, of the layout limit',
        value: rate,
        figure: `${fmt(rate)} IDs/s`,
        baselineValue: LIMIT,
        baseline: `layout limit ${fmt(LIMIT)}/s`,
      }),
      {
        ...plainRow(
          'event-loop delay during that run (`monitorEventLoopDelay`)',
          `max ${maxStallMs.toFixed(2)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(2)} ms`,
        ),
        target: 'max ≤ 5 ms',
        met: maxStallMs <= 5,
      },
    ];
  } finally {
    await moduleRef.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** The snowflake generator and the snowflake HTTP route. */
export const bench: BenchModule = {
  name: 'snowflake',
  title: 'Snowflake mode',
  async run(context) {
    const rows = await generator(context);
    if (!context.skipHttp) {
      const http = await compareWithBaseline(context, {
        label: 'snowflake `get`',
        path: '/api/snowflake/get/bench',
      });
      rows.push(...http.rows);
    }
    return rows;
  },
};

if (require.main === module) runAlone(bench);
