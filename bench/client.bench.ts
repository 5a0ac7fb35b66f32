/**
 * Remote client benchmark (`npm run bench:client`, and a module of `npm run bench`): IDs per
 * second delivered to a caller through `LeafClient` (segment IDs from local ranges) against
 * per-ID HTTP to the same server, in the same run. The server is the shared Leaf bench server
 * with its default configuration (bench/support/leaf-server.ts: the built application, started
 * by environment only, on its default SQLite file).
 *
 * 1. Per-ID HTTP: autocannon on `GET /api/segment/get/{key}` (keep-alive, `BENCH_CONNECTIONS`).
 * 2. The client's synchronous path: `client.getSync(key)` and a per-key generator, in chunks
 *    of 100 k calls with a yield between chunks so background range fetches complete.
 * 3. The client's async path: `await client.get('segment', key)`.
 * 4. The client's transport (node:http) on the per-ID route, with and without keep-alive.
 *
 * Targets: the synchronous path at least 10 M IDs/s and at least 100× the per-ID HTTP rate.
 */
import { performance } from 'node:perf_hooks';
import {
  LeafClient,
  NodeHttpTransport,
  SegmentNotReadyError,
  type SegmentGenerator,
} from 'nestjs-leaf/client';
import { load, whilePinned } from './support/http-load';
import { fmt, fmtRate, median, plainRow, type BenchModule, type BenchRow } from './support/report';
import { runAlone } from './support/run';

const TAG = 'leaf-segment-test';
const CHUNK = 100_000;
const CHUNKS_PER_ROUND = 40;
/** Measured rounds of each synchronous variant: the full run, and the quick one. */
const ROUNDS = { full: 5, quick: 1 };
/** Callers of the transport comparison (the client's default pool size). */
const CONCURRENCY = 8;

const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Times CHUNKS_PER_ROUND chunks of up to CHUNK synchronous calls, yielding between them so
 * range fetches complete. A tight loop can outrun the fetch of the next range (a range of
 * 1 M IDs lasts about 0.1 s at this rate): a chunk then stops at the first
 * `SegmentNotReadyError`, and the wait for the range (`await client.get`) is not timed —
 * this measures the synchronous path while the buffer is warm.
 */
async function measureSync(
  client: LeafClient,
  chunk: (out: { last: bigint }) => number,
): Promise<number> {
  let elapsed = 0;
  let taken = 0;
  const out = { last: 0n };
  for (let c = 0; c < CHUNKS_PER_ROUND; c++) {
    const start = performance.now();
    const n = chunk(out);
    elapsed += performance.now() - start;
    taken += n;
    if (n < CHUNK) await client.get('segment', TAG);
    await yieldToLoop();
  }
  if (out.last < 0n) console.log(out.last);
  return taken / (elapsed / 1000);
}

// One loop function per variant, so each call site stays monomorphic.
function keyedChunk(client: LeafClient, out: { last: bigint }): number {
  let i = 0;
  try {
    for (; i < CHUNK; i++) out.last = client.getSync(TAG);
  } catch (error) {
    if (!(error instanceof SegmentNotReadyError)) throw error;
  }
  return i;
}

function handleChunk(handle: SegmentGenerator, out: { last: bigint }): number {
  let i = 0;
  try {
    for (; i < CHUNK; i++) out.last = handle.next();
  } catch (error) {
    if (!(error instanceof SegmentNotReadyError)) throw error;
  }
  return i;
}

async function measureAsync(client: LeafClient): Promise<number> {
  const n = 250_000;
  let sink = 0n;
  const start = performance.now();
  for (let i = 0; i < n; i++) sink = await client.get('segment', TAG);
  const elapsed = performance.now() - start;
  if (sink < 0n) console.log(sink);
  return n / (elapsed / 1000);
}

/**
 * Requests per second through the client's own transport, `CONCURRENCY` callers in a loop
 * for `seconds`: what a keep-alive pool saves over a connection per request.
 */
async function transportRate(url: string, keepAlive: boolean, seconds: number): Promise<number> {
  const transport = new NodeHttpTransport({ maxSockets: CONCURRENCY, keepAlive });
  const endAt = performance.now() + seconds * 1000;
  let done = 0;
  const caller = async () => {
    while (performance.now() < endAt) {
      const answer = await transport.get(url, 5000);
      if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${answer.body}`);
      done++;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, caller));
  const elapsed = performance.now() - start;
  transport.close();
  return done / (elapsed / 1000);
}

function ratioRow(
  measurement: string,
  value: number,
  httpRate: number,
  target?: { minRatio: number; minRate: number },
): BenchRow {
  const ratio = value / httpRate;
  return {
    measurement,
    figure: `${fmtRate(value)} IDs/s`,
    baseline: `per-ID HTTP ${fmt(httpRate)} IDs/s`,
    ratio: `**${fmt(ratio, 0)}×**`,
    target: target ? `≥ ${target.minRatio}× and ≥ ${fmtRate(target.minRate)} IDs/s` : '—',
    met: target ? ratio >= target.minRatio && value >= target.minRate : null,
  };
}

export const bench: BenchModule = {
  name: 'client',
  title: 'Remote client (nestjs-leaf/client)',
  async run(context) {
    if (context.skipHttp) return [plainRow('remote client', 'skipped (BENCH_SKIP_HTTP=1)')];
    const { leaf: url } = await context.servers();
    const perIdUrl = `${url}/api/segment/get/${TAG}`;
    const rounds = context.quick ? ROUNDS.quick : ROUNDS.full;
    const perId = await whilePinned(() =>
      load(perIdUrl, { durationSec: context.seconds, connections: context.connections }),
    );
    if (perId.errors + perId.non2xx > 0) {
      throw new Error(`per-ID HTTP run had errors: ${JSON.stringify(perId)}`);
    }
    const transportSeconds = Math.min(context.seconds, 3);
    const keepAlive = await transportRate(perIdUrl, true, transportSeconds);
    const noKeepAlive = await transportRate(perIdUrl, false, transportSeconds);

    const client = new LeafClient({
      servers: [url],
      // Ranges of 200 k to 1 M IDs (the server's LEAF_MAX_RANGE default is 1 M).
      segment: { minRangeSize: 200_000, maxRangeSize: 1_000_000, rangeDurationMs: 60_000 },
    });
    try {
      await client.warm([TAG]);
      const handle = client.generator(TAG);
      await measureSync(client, (out) => keyedChunk(client, out));
      await measureSync(client, (out) => handleChunk(handle, out));
      const keyed: number[] = [];
      const handles: number[] = [];
      const async: number[] = [];
      for (let round = 0; round < rounds; round++) {
        keyed.push(await measureSync(client, (out) => keyedChunk(client, out)));
        handles.push(await measureSync(client, (out) => handleChunk(handle, out)));
        async.push(await measureAsync(client));
      }
      const stats = client.stats();
      const issued = stats.buffers.reduce((sum, b) => sum + b.issued, 0);
      const largest = Math.max(...stats.buffers.map((b) => b.step));
      context.log(
        `range requests: ${stats.rangeRequests} for ${fmt(issued)} IDs (largest range ${fmt(largest)})`,
      );
      const httpRate = perId.requestsPerSec;
      return [
        ratioRow('`client.getSync(key)` (local ranges, sync)', median(keyed), httpRate, {
          minRatio: 100,
          minRate: 10e6,
        }),
        ratioRow('`client.generator(key).next()`', median(handles), httpRate),
        ratioRow("`await client.get('segment', key)`", median(async), httpRate),
        {
          measurement: `client transport, ${CONCURRENCY} callers on the per-ID route, keep-alive`,
          figure: `${fmt(keepAlive)} req/s`,
          baseline: `a connection per request ${fmt(noKeepAlive)} req/s`,
          ratio: `${fmt(keepAlive / noKeepAlive, 1)}×`,
          target: '—',
          met: null,
        },
        plainRow(
          'range requests of the client run',
          `${stats.rangeRequests} for ${fmt(issued)} IDs`,
        ),
      ];
    } finally {
      await client.close();
    }
  },
};

if (require.main === module) runAlone(bench);
