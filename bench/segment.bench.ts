/**
 * Segment-mode benchmarks (`npm run bench:segment`). Every figure is printed next to a
 * baseline measured in the same run, because ratios hold on a noisy machine and absolute
 * numbers do not.
 *
 * 1. In-process hot path vs a bare in-memory bigint counter: the keyed synchronous call,
 *    the per-tag handle, and the async call.
 * 2. HTTP `GET /api/segment/get/{key}` vs a bare Nest + Fastify route answering a constant
 *    (same adapter settings), both in their own process: throughput, then p99 at a fixed
 *    moderate rate.
 * 3. IDs per second through the `ids` and `range` routes.
 *
 * Options (environment): BENCH_SECONDS (default 5) per HTTP run, BENCH_CONNECTIONS (50),
 * BENCH_RATE (2000 req/s for the latency run), BENCH_SKIP_HTTP=1.
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { Test } from '@nestjs/testing';
import { ScheduleModule } from '@nestjs/schedule';
import { LeafModule, SegmentService } from 'nestjs-leaf';
import { InMemoryAllocStore } from 'nestjs-leaf/testing';
import type { SegmentGenerator } from '@app/leaf/core/segment/segment-generator';
import { fmt, median, ratioLine } from './support/report';
import { compareWithBaseline, httpSettings, load, withBenchServers } from './support/http-load';

const CHUNK = 1_000_000;
const ROUNDS = 5;
const CHUNKS_PER_ROUND = 4;

/** A bare in-memory bigint counter: the ceiling any ID generator is compared to. */
class BigIntCounter {
  private value = 1n;
  next(): bigint {
    // Written as an add rather than `this.value++`: V8 optimises a BigInt add with a
    // constant better than the increment operator, and the baseline must be the fastest form.
    const value = this.value;
    this.value = value + 1n;
    return value;
  }
}

const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Times CHUNKS_PER_ROUND chunks of CHUNK calls made by `chunk`, yielding to the event loop
 * between chunks so background range loads complete exactly as they would in a server.
 * Each variant has its own loop function (below): one loop shared by several closures
 * would become a megamorphic call site and measure V8's inline caches instead of the code.
 */
async function measureSync(chunk: () => bigint): Promise<number> {
  let elapsed = 0;
  let sink = 0n;
  for (let c = 0; c < CHUNKS_PER_ROUND; c++) {
    const start = performance.now();
    sink ^= chunk();
    elapsed += performance.now() - start;
    await yieldToLoop();
  }
  if (sink < 0n) console.log(sink); // keeps the loops from being optimised away
  return (CHUNK * CHUNKS_PER_ROUND) / (elapsed / 1000);
}

function counterChunk(counter: BigIntCounter): bigint {
  let last = 0n;
  for (let i = 0; i < CHUNK; i++) last = counter.next();
  return last;
}

function keyedChunk(segments: SegmentService, tag: string): bigint {
  let last = 0n;
  for (let i = 0; i < CHUNK; i++) last = segments.getSync(tag);
  return last;
}

function handleChunk(handle: SegmentGenerator): bigint {
  let last = 0n;
  for (let i = 0; i < CHUNK; i++) last = handle.next();
  return last;
}

async function measureAsync(body: () => Promise<bigint>): Promise<number> {
  const n = CHUNK / 4;
  let sink = 0n;
  const start = performance.now();
  for (let i = 0; i < n; i++) sink = await body();
  const elapsed = performance.now() - start;
  if (sink < 0n) console.log(sink);
  return n / (elapsed / 1000);
}

async function inProcess(): Promise<void> {
  // A large row step keeps database loads out of the picture: this measures the hot path.
  const store = new InMemoryAllocStore().setTag('bench', 50_000_000);
  const moduleRef = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      LeafModule.forRoot({ segment: { store, warmTags: ['bench'] }, snowflake: false }),
    ],
  }).compile();
  await moduleRef.init();
  const segments = moduleRef.get(SegmentService);
  const handle = segments.generator('bench');
  const counter = new BigIntCounter();

  const results: Record<string, number[]> = { counter: [], keyed: [], handle: [], async: [] };
  // Warm-up, then interleaved rounds so drift hits every variant alike.
  const runCounter = () => measureSync(() => counterChunk(counter));
  const runKeyed = () => measureSync(() => keyedChunk(segments, 'bench'));
  const runHandle = () => measureSync(() => handleChunk(handle));
  await runCounter();
  await runKeyed();
  await runHandle();
  for (let round = 0; round < ROUNDS; round++) {
    results.counter.push(await runCounter());
    results.keyed.push(await runKeyed());
    results.handle.push(await runHandle());
    results.async.push(await measureAsync(() => segments.get('bench')));
  }
  await moduleRef.close();

  const counterOps = median(results.counter);
  console.log(
    '\n== In-process hot path (median of %d rounds of %s calls)',
    ROUNDS,
    fmt(CHUNK * CHUNKS_PER_ROUND),
  );
  console.log(`bare bigint counter                          ${fmt(counterOps).padStart(14)} ops/s`);
  console.log(
    `SegmentService.getSync(tag)                  ${fmt(median(results.keyed)).padStart(14)} ops/s`,
  );
  console.log(
    `SegmentGenerator.next() (per-tag handle)     ${fmt(median(results.handle)).padStart(14)} ops/s`,
  );
  console.log(
    `await SegmentService.get(tag)                ${fmt(median(results.async)).padStart(14)} ops/s`,
  );
  console.log(ratioLine('keyed sync call', median(results.keyed), counterOps, 0.7));
  console.log(ratioLine('per-tag handle', median(results.handle), counterOps, 0.85));
  console.log(ratioLine('async call (no target)', median(results.async), counterOps, 0));
}

async function http(): Promise<void> {
  const settings = httpSettings();
  const { seconds } = settings;
  await withBenchServers(async ({ base, leaf }) => {
    const leafRps = await compareWithBaseline({
      label: 'Leaf segment route',
      path: '/api/segment/get/leaf-segment-test',
      baseUrl: base,
      leafUrl: leaf,
      ...settings,
    });

    const count = 1000;
    const ids = await load(`${leaf}/api/segment/ids/leaf-segment-test?count=${count}`, {
      durationSec: seconds,
      connections: 10,
    });
    const range = await load(`${leaf}/api/segment/range/leaf-segment-test?count=${count}`, {
      durationSec: seconds,
      connections: 10,
    });
    console.log(
      `\n== IDs per second through the batch routes (count=${count}, 10 connections, ${seconds} s)`,
    );
    console.log(
      `GET /api/segment/ids/{key}    ${fmt(ids.requestsPerSec).padStart(10)} req/s = ${fmt(ids.requestsPerSec * count).padStart(14)} IDs/s`,
    );
    console.log(
      `GET /api/segment/range/{key}  ${fmt(range.requestsPerSec).padStart(10)} req/s = ${fmt(range.requestsPerSec * count).padStart(14)} IDs/s`,
    );
    console.log(`(single-ID route for comparison: ${fmt(leafRps)} IDs/s)`);
  });
}

async function main(): Promise<void> {
  console.log(`Node ${process.version}, ${new Date().toISOString()}`);
  await inProcess();
  if (process.env.BENCH_SKIP_HTTP !== '1') await http();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
