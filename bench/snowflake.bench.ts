/**
 * Snowflake-mode benchmarks (`npm run bench:snowflake`), each against a baseline from the
 * same run.
 *
 * 1. Sustained IDs per second of one generator (embedded worker, real clock, real time
 *    lease in a temp state dir) over BENCH_SECONDS (default 5) through `getIds(4096)` in a
 *    loop, as a fraction of the layout's limit (4,096,000/s) and of the limit reachable with
 *    Leaf's random sequence start (4096 − mean start per millisecond), while
 *    `monitorEventLoopDelay` records how long the event loop ever stalled (target ≤ 5 ms).
 *    Every ID is checked to be larger than the one before.
 * 2. HTTP `GET /api/snowflake/get/{key}` vs a bare Nest + Fastify route answering a
 *    constant (same adapter settings), both in their own process.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Test } from '@nestjs/testing';
import { ScheduleModule } from '@nestjs/schedule';
import { LeafModule, SnowflakeService } from 'nestjs-leaf';
import { fmt, ratioLine } from './support/report';
import { compareWithBaseline, httpSettings, withBenchServers } from './support/http-load';

const LIMIT = 4_096_000;
const RANDOM_BOUND = 100;
const BATCH = 4096;

async function generator(seconds: number): Promise<void> {
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
    const warmUntil = performance.now() + 1000;
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
    console.log(
      `\n== One snowflake generator, getIds(${BATCH}) in a loop for ${seconds} s (embedded worker, real lease)`,
    );
    console.log(
      `issued ${fmt(issued)} IDs in ${elapsed.toFixed(2)} s = ${fmt(rate)} IDs/s; every ID larger than the last: ${ordered}`,
    );
    console.log(
      `layout limit 4,096,000/s; reachable with random start 0-${RANDOM_BOUND - 1}: ${fmt(reachable)}/s`,
    );
    console.log(ratioLine('of the layout limit (no target)', rate, LIMIT, 0));
    console.log(ratioLine('of the reachable limit', rate, reachable, 0.97));
    console.log(
      `event loop delay: max ${maxStallMs.toFixed(2)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(2)} ms (target max <= 5 ms) ${maxStallMs <= 5 ? 'OK' : 'ABOVE TARGET'}`,
    );
  } finally {
    await moduleRef.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

async function http(): Promise<void> {
  await withBenchServers(({ base, leaf }) =>
    compareWithBaseline({
      label: 'Leaf snowflake route',
      path: '/api/snowflake/get/bench',
      baseUrl: base,
      leafUrl: leaf,
      ...httpSettings(),
    }).then(() => undefined),
  );
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  console.log(`Node ${process.version}, ${new Date().toISOString()}`);
  await generator(seconds);
  if (process.env.BENCH_SKIP_HTTP !== '1') await http();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
