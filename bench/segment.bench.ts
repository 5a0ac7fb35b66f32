/**
 * Segment-mode benchmarks (`npm run bench:segment`; a module of `npm run bench`). Every
 * figure is next to a baseline measured in the same run, because ratios hold on a noisy
 * machine and absolute numbers do not.
 *
 * 1. In-process hot path vs a bare in-memory bigint counter: the keyed synchronous call,
 *    the per-tag handle, and the async call.
 * 2. HTTP `GET /api/segment/get/{key}` vs a bare Nest + Fastify route answering a constant
 *    (same adapter settings), each in its own process: throughput of the application with
 *    its default configuration (access log off) and with the access log on, then
 *    p50/p99/p99.9 at a fixed moderate rate (bench/support/http-load.ts).
 * 3. IDs per second through the `ids` and `range` routes.
 *
 * Options: see bench/support/report.ts (`BENCH_SECONDS`, `BENCH_CONNECTIONS`, `BENCH_RATE`,
 * `BENCH_SKIP_HTTP=1`, `--quick`).
 */
import { performance } from 'node:perf_hooks';
import type { SegmentService } from 'nestjs-leaf';
import { InMemoryAllocStore } from 'nestjs-leaf/testing';
import type { SegmentGenerator } from '@app/leaf/core/segment/segment-generator';
import {
  fmt,
  fmtRate,
  median,
  percentRow,
  type BenchContext,
  type BenchModule,
  type BenchRow,
} from './support/report';
import { runAlone } from './support/run';
import { compareWithBaseline, load, whilePinned } from './support/http-load';
import { openSegmentModule } from './support/segment-module';

const CHUNKS_PER_ROUND = 4;
/** Calls per chunk and rounds: the full run, and the quick one (a smoke test). */
const FULL = { chunk: 1_000_000, rounds: 5 };
const QUICK = { chunk: 100_000, rounds: 1 };

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
async function measureSync(calls: number, chunk: () => bigint): Promise<number> {
  let elapsed = 0;
  let sink = 0n;
  for (let c = 0; c < CHUNKS_PER_ROUND; c++) {
    const start = performance.now();
    sink ^= chunk();
    elapsed += performance.now() - start;
    await yieldToLoop();
  }
  if (sink < 0n) console.log(sink); // keeps the loops from being optimised away
  return (calls * CHUNKS_PER_ROUND) / (elapsed / 1000);
}

function counterChunk(counter: BigIntCounter, calls: number): bigint {
  let last = 0n;
  for (let i = 0; i < calls; i++) last = counter.next();
  return last;
}

function keyedChunk(segments: SegmentService, tag: string, calls: number): bigint {
  let last = 0n;
  for (let i = 0; i < calls; i++) last = segments.getSync(tag);
  return last;
}

function handleChunk(handle: SegmentGenerator, calls: number): bigint {
  let last = 0n;
  for (let i = 0; i < calls; i++) last = handle.next();
  return last;
}

async function measureAsync(calls: number, body: () => Promise<bigint>): Promise<number> {
  const n = calls / 4;
  let sink = 0n;
  const start = performance.now();
  for (let i = 0; i < n; i++) sink = await body();
  const elapsed = performance.now() - start;
  if (sink < 0n) console.log(sink);
  return n / (elapsed / 1000);
}

async function inProcess(context: BenchContext): Promise<BenchRow[]> {
  const { chunk: calls, rounds } = context.quick ? QUICK : FULL;
  // A large row step keeps database loads out of the picture: this measures the hot path.
  const store = new InMemoryAllocStore().setTag('bench', 50_000_000);
  const leaf = await openSegmentModule({ store, warmTags: ['bench'] });
  const { segments } = leaf;
  const handle = segments.generator('bench');
  const counter = new BigIntCounter();

  const results: Record<string, number[]> = { counter: [], keyed: [], handle: [], async: [] };
  // Warm-up, then interleaved rounds so drift hits every variant alike.
  const runCounter = () => measureSync(calls, () => counterChunk(counter, calls));
  const runKeyed = () => measureSync(calls, () => keyedChunk(segments, 'bench', calls));
  const runHandle = () => measureSync(calls, () => handleChunk(handle, calls));
  try {
    await runCounter();
    await runKeyed();
    await runHandle();
    for (let round = 0; round < rounds; round++) {
      results.counter.push(await runCounter());
      results.keyed.push(await runKeyed());
      results.handle.push(await runHandle());
      results.async.push(await measureAsync(calls, () => segments.get('bench')));
    }
  } finally {
    await leaf.close();
  }

  const counterOps = median(results.counter);
  context.log(
    `in-process: median of ${rounds} rounds of ${fmt(calls * CHUNKS_PER_ROUND)} calls; ` +
      `counter ${fmt(counterOps)}, keyed ${fmt(median(results.keyed))}, handle ` +
      `${fmt(median(results.handle))}, async ${fmt(median(results.async))} ops/s`,
  );
  const baseline = `bare bigint counter ${fmtRate(counterOps)} ops/s`;
  const row = (measurement: string, values: number[], min?: number): BenchRow =>
    percentRow({
      measurement,
      value: median(values),
      figure: `${fmtRate(median(values))} IDs/s`,
      baselineValue: counterOps,
      baseline,
      min,
    });
  return [
    row('`SegmentService.getSync(tag)` (keyed, sync)', results.keyed, 0.7),
    row('`SegmentGenerator.next()` (per-tag handle)', results.handle, 0.85),
    row('`await SegmentService.get(tag)`', results.async),
  ];
}

async function http(context: BenchContext): Promise<BenchRow[]> {
  const { seconds } = context;
  const { rows, leafRps } = await compareWithBaseline(context, {
    label: 'segment `get`',
    path: '/api/segment/get/leaf-segment-test',
  });
  const { leaf } = await context.servers();
  const count = 1000;
  for (const route of ['ids', 'range'] as const) {
    const url = `${leaf}/api/segment/${route}/leaf-segment-test?count=${count}`;
    const result = await whilePinned(() => load(url, { durationSec: seconds, connections: 10 }));
    if (result.errors + result.non2xx > 0) {
      throw new Error(`GET /api/segment/${route}: ${result.errors + result.non2xx} failed`);
    }
    const idsPerSec = result.requestsPerSec * count;
    rows.push({
      measurement: `\`GET /api/segment/${route}/{key}?count=${count}\` (10 connections)`,
      figure: `${fmtRate(idsPerSec)} IDs/s (${fmt(result.requestsPerSec)} req/s)`,
      baseline: `single-ID route ${fmt(leafRps)} IDs/s`,
      ratio: `×${fmt(idsPerSec / leafRps)}`,
      target: '—',
      met: null,
    });
  }
  return rows;
}

/** The segment hot path and the segment HTTP routes. */
export const bench: BenchModule = {
  name: 'segment',
  title: 'Segment mode',
  async run(context) {
    const rows = await inProcess(context);
    if (!context.skipHttp) rows.push(...(await http(context)));
    return rows;
  },
};

if (require.main === module) runAlone(bench);
