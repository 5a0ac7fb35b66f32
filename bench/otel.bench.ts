/**
 * OpenTelemetry's cost on the per-ID path (`npm run bench -- --only otel`; a module of
 * `npm run bench`): `SegmentGenerator.next()` of a LeafModule whose tracing is enabled
 * (`LeafTracing.enable()`) with an SDK registered (`BasicTracerProvider`, a span processor
 * exporting to memory, set as the global provider), against the same call of a LeafModule
 * without tracing, in the same process and the same run. Both load ranges all along (row
 * step 100,000), each load one `leaf.segment.allocate` span, so the figure includes the
 * spans' own cost; IDs themselves never record a span. Two rows: the dynamic step as in
 * production (the goal), and every range 100,000 IDs (hundreds of loads, and spans, a
 * second: the cost of a span made visible; no goal). The two run interleaved chunk by
 * chunk, timed in this process's CPU time (a loaded machine's other processes do not count);
 * the figure is the median of the per-round ratios with its 95 % interval. A third row runs
 * the same comparison with tracing off on both sides: the harness's own spread.
 * Goal: ≥ 98 % of the rate without tracing.
 */
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { LeafModule, SegmentService } from 'nestjs-leaf';
import { LeafTracing } from 'nestjs-leaf/otel';
import { InMemoryAllocStore } from 'nestjs-leaf/testing';
import type { SegmentGenerator } from '@app/leaf/core/segment/segment-generator';
import { ratioCell } from './support/http-load';
import { fmtRate, median, type BenchModule, type BenchRow } from './support/report';
import { runAlone } from './support/run';

/**
 * Calls per synchronous chunk: half a range, so that the next range (loaded in the
 * background while the event loop turns between chunks) is always there in time.
 */
const CHUNK = 50_000;
/** Chunks per measurement and rounds: the full run, and the quick one (a smoke test). */
const FULL = { chunks: 80, rounds: 21 };
const QUICK = { chunks: 8, rounds: 3 };
const STEP = 100_000;
const GOAL = 0.98;

/**
 * This process's CPU time in ms (user + system): on a shared machine, time other processes
 * take from it does not count, where wall time would (the two variants are compared).
 */
function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

function nextChunk(handle: SegmentGenerator, calls: number): bigint {
  let last = 0n;
  for (let i = 0; i < calls; i++) last = handle.next();
  return last;
}

/**
 * IDs per second of each handle over `chunks` chunks, the two interleaved chunk by chunk
 * (alternating which goes first), so that a slow moment of a shared machine hits both alike.
 * Each chunk is timed with the event-loop turn after it, where its range loads complete and
 * their spans are recorded: the spans' cost is in the figure.
 */
async function measurePair(
  plain: SegmentGenerator,
  traced: SegmentGenerator,
  chunks: number,
): Promise<{ plain: number; traced: number }> {
  const elapsed = { plain: 0, traced: 0 };
  let sink = 0n;
  for (let c = 0; c < chunks; c++) {
    const order = c % 2 === 0 ? (['plain', 'traced'] as const) : (['traced', 'plain'] as const);
    for (const which of order) {
      const start = cpuMs();
      sink ^= nextChunk(which === 'plain' ? plain : traced, CHUNK);
      await yieldToLoop();
      elapsed[which] += cpuMs() - start;
    }
  }
  if (sink < 0n) console.log(sink);
  const rate = (ms: number) => (CHUNK * chunks) / (ms / 1000);
  return { plain: rate(elapsed.plain), traced: rate(elapsed.traced) };
}

async function open(tracing: boolean, maxStep: number | undefined) {
  const store = new InMemoryAllocStore().setTag('bench', STEP);
  const moduleRef = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      LeafModule.forRoot({
        segment: { store, warmTags: ['bench'], ...(maxStep === undefined ? {} : { maxStep }) },
        snowflake: false,
      }),
    ],
  }).compile();
  moduleRef.useLogger(false);
  if (tracing) moduleRef.get(LeafTracing).enable(); // the global provider: the registered SDK
  const app = await moduleRef.init();
  return { handle: app.get(SegmentService).generator('bench'), close: () => app.close() };
}

interface Scenario {
  readonly ratios: number[];
  readonly traced: number[];
  readonly plain: number[];
  readonly spans: number;
}

/** A traced and a plain module on `maxStep`, measured against each other for `rounds` rounds. */
async function scenario(
  maxStep: number | undefined,
  chunks: number,
  rounds: number,
  tracing = true,
): Promise<Scenario> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  trace.setGlobalTracerProvider(provider);
  const traced = await open(tracing, maxStep);
  const plain = await open(false, maxStep);
  const result: Scenario = { ratios: [], traced: [], plain: [], spans: 0 };
  try {
    await measurePair(plain.handle, traced.handle, chunks); // warm-up
    for (let round = 0; round < rounds; round++) {
      const rate = await measurePair(plain.handle, traced.handle, chunks);
      result.traced.push(rate.traced);
      result.plain.push(rate.plain);
      result.ratios.push(rate.traced / rate.plain);
    }
    // shutdown() below empties the exporter.
    return { ...result, spans: exporter.getFinishedSpans().length };
  } finally {
    await traced.close();
    await plain.close();
    await provider.shutdown();
    trace.disable();
  }
}

export const bench: BenchModule = {
  name: 'otel',
  title: 'OpenTelemetry',
  async run(context): Promise<BenchRow[]> {
    const { chunks, rounds } = context.quick ? QUICK : FULL;
    const rows: BenchRow[] = [];
    const cases = [
      [undefined, 'the dynamic step (row step 100,000, `maxStep` 1,000,000)', GOAL, true],
      [undefined, 'the same, tracing off on both sides (the harness’s own spread)', null, false],
      [STEP, 'every range 100,000 IDs (`maxStep` 100,000: hundreds of loads a second)', null, true],
    ] as const;
    for (const [maxStep, label, goal, tracing] of cases) {
      const run = await scenario(maxStep, chunks, rounds, tracing);
      if (tracing && run.spans === 0) {
        throw new Error('the traced module recorded no span: nothing measured');
      }
      context.log(
        `otel (maxStep ${maxStep ?? 'default'}, tracing ${tracing}): ${rounds} rounds of ` +
          `${chunks} × ${CHUNK} calls; traced ${fmtRate(median(run.traced))}, plain ` +
          `${fmtRate(median(run.plain))} IDs/s; ${run.spans} spans`,
      );
      rows.push({
        measurement: tracing
          ? `\`SegmentGenerator.next()\` with tracing on and an SDK registered, ${label}; ${run.spans} \`leaf.segment.allocate\` spans`
          : `\`SegmentGenerator.next()\`, ${label}`,
        figure: `${fmtRate(median(run.traced))} IDs/s`,
        baseline: `the same call without tracing: ${fmtRate(median(run.plain))} IDs/s`,
        ratio: ratioCell(run.ratios),
        target: goal === null ? '—' : `≥ ${goal * 100} %`,
        met: goal === null ? null : median(run.ratios) >= goal,
      });
    }
    return rows;
  },
};

if (require.main === module) runAlone(bench);
