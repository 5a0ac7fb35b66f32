/**
 * Business numbers (`npm run bench:business-numbers`; a module of `npm run bench`): formatted
 * numbers (`ORD-20261204-000123`) per second against the plain numeric ID of the same mode in
 * the same run (docs/formats.md, "Business numbers"; goal ≥ 50 %).
 *
 * 1. In process: `await BusinessNumberService.next(tag)` vs `await SegmentService.get(tag)`,
 *    and `nextBatch(tag, 100)` vs `getIds(tag, 100)`, on an in-memory store with a large step
 *    (the hot path, no database), in interleaved rounds.
 * 2. HTTP: `GET /api/segment/number/{tag}` vs `GET /api/segment/get/{key}` on one application
 *    process (the build, SQLite, a format defined through the admin API), in alternating
 *    rounds of `BENCH_ROUND_SECONDS`.
 *
 * Options: see bench/support/report.ts (`BENCH_SECONDS`, `BENCH_CONNECTIONS`, `BENCH_ROUNDS`,
 * `BENCH_SKIP_HTTP=1`, `--quick`).
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { LeafModule, SegmentService } from 'nestjs-leaf';
import { LEAF_NUMBER_FORMAT_STORE } from '@app/leaf/nest/leaf.constants';
import { BusinessNumberService } from 'nestjs-leaf/numbers';
import { InMemoryAllocStore, InMemoryNumberFormatStore } from 'nestjs-leaf/testing';
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
import { load, whilePinned } from './support/http-load';
import { ensureBuilt, LeafServer } from './support/leaf-server';

/** Calls per round and rounds: the full run, and the quick one (a smoke test). */
const FULL = { calls: 400_000, rounds: 5 };
const QUICK = { calls: 40_000, rounds: 1 };
const BATCH = 100;
const TOKEN = 'bench-admin-token-0123456789abcdef';

async function timed(calls: number, body: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < calls; i++) await body();
  return calls / ((performance.now() - start) / 1000);
}

async function inProcess(context: BenchContext): Promise<BenchRow[]> {
  const { calls, rounds } = context.quick ? QUICK : FULL;
  // One step covers the whole run: no range load is measured, only the hot path.
  const store = new InMemoryAllocStore().setTag('plain', 50_000_000).setTag('orders', 50_000_000);
  const formats = new InMemoryNumberFormatStore().setNow(Date.parse('2026-12-04T04:00:00Z'));
  const moduleRef = await Test.createTestingModule({
    imports: [ScheduleModule.forRoot(), LeafModule.forRoot({ segment: { store } })],
  })
    .overrideProvider(LEAF_NUMBER_FORMAT_STORE)
    .useValue(formats)
    .compile();
  moduleRef.useLogger(false);
  const app = await moduleRef.init();
  const results: Record<string, number[]> = {
    plain: [],
    text: [],
    number: [],
    ids: [],
    batch: [],
  };
  try {
    const segments = app.get(SegmentService);
    const numbers = app.get(BusinessNumberService);
    await numbers.defineFormat({
      tag: 'orders',
      prefix: 'ORD',
      datePattern: 'yyyyMMdd',
      timeZone: 'Asia/Shanghai',
      width: 9,
    });
    const plain = () => timed(calls, () => segments.get('plain'));
    const text = () => timed(calls, async () => (await segments.get('plain')).toString());
    const formatted = () => timed(calls, () => numbers.next('orders'));
    const ids = () => timed(calls / BATCH, () => segments.getIds('plain', BATCH));
    const batch = () => timed(calls / BATCH, () => numbers.nextBatch('orders', BATCH));
    await plain();
    await formatted();
    for (let round = 0; round < rounds; round++) {
      results.plain.push(await plain());
      results.number.push(await formatted());
      results.text.push(await text());
      results.ids.push((await ids()) * BATCH);
      results.batch.push((await batch()) * BATCH);
    }
    context.log(`in-process example: ${await numbers.next('orders')}`);
  } finally {
    await app.close();
  }
  context.log(
    `in-process: median of ${rounds} rounds of ${fmt(calls)} calls; get ${fmt(median(results.plain))}, ` +
      `get as text ${fmt(median(results.text))}, next ${fmt(median(results.number))}, getIds ${fmt(median(results.ids))}, ` +
      `nextBatch ${fmt(median(results.batch))} IDs/s`,
  );
  return [
    percentRow({
      measurement: '`await BusinessNumberService.next(tag)` (`ORD-20261204-000000123`)',
      value: median(results.number),
      figure: `${fmtRate(median(results.number))} numbers/s`,
      baselineValue: median(results.plain),
      baseline: `\`await SegmentService.get(tag)\` ${fmtRate(median(results.plain))} IDs/s`,
      min: 0.5,
    }),
    percentRow({
      measurement: 'the same, against the plain ID as decimal text',
      value: median(results.number),
      figure: `${fmtRate(median(results.number))} numbers/s`,
      baselineValue: median(results.text),
      baseline: `\`(await get(tag)).toString()\` ${fmtRate(median(results.text))} IDs/s`,
    }),
    percentRow({
      measurement: `\`nextBatch(tag, ${BATCH})\``,
      value: median(results.batch),
      figure: `${fmtRate(median(results.batch))} numbers/s`,
      baselineValue: median(results.ids),
      baseline: `\`getIds(tag, ${BATCH})\` ${fmtRate(median(results.ids))} IDs/s`,
      min: 0.5,
    }),
  ];
}

async function http(context: BenchContext): Promise<BenchRow[]> {
  ensureBuilt(context.log);
  const server = await LeafServer.start(
    'business numbers',
    { LEAF_ADMIN_TOKEN: TOKEN, LEAF_SNOWFLAKE_ENABLED: 'false', LEAF_ACCESS_LOG: 'false' },
    { cpu: null },
  );
  const base = `http://127.0.0.1:${server.port}`;
  try {
    // A tag with a format is served as numbers only (docs/security.md, "At the door"): the
    // numbers get a tag of their own, with the step of the baseline's.
    const admin = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const baseline = (await (
      await fetch(`${base}/admin/tags/leaf-segment-test`, { headers: admin })
    ).json()) as { step: number };
    const tag = await fetch(`${base}/admin/tags`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ biz_tag: 'orders', step: baseline.step }),
    });
    if (tag.status !== 201) throw new Error(`POST /admin/tags: ${tag.status}`);
    const created = await fetch(`${base}/admin/formats`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({
        biz_tag: 'orders',
        prefix: 'ORD',
        date_pattern: 'yyyyMMdd',
        time_zone: 'Asia/Shanghai',
        width: 9,
      }),
    });
    if (created.status !== 201) throw new Error(`POST /admin/formats: ${created.status}`);
    const urls = {
      plain: `${base}/api/segment/get/leaf-segment-test`,
      number: `${base}/api/segment/number/orders`,
    };
    context.log(`http example: ${await (await fetch(urls.number)).text()}`);
    const options = { durationSec: context.roundSeconds, connections: context.connections };
    await whilePinned(() => load(urls.plain, options));
    await whilePinned(() => load(urls.number, options));
    const rounds = context.quick ? 1 : Math.max(6, Math.min(context.rounds, 12));
    const rates = { plain: [] as number[], number: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      for (const kind of round % 2 === 0
        ? (['plain', 'number'] as const)
        : (['number', 'plain'] as const)) {
        const result = await whilePinned(() => load(urls[kind], options));
        if (result.errors + result.non2xx > 0) {
          throw new Error(`GET ${urls[kind]}: ${result.errors + result.non2xx} failed`);
        }
        rates[kind].push(result.requestsPerSec);
      }
    }
    context.log(
      `http: ${rounds} alternating rounds of ${context.roundSeconds} s, ${context.connections} connections; ` +
        `get ${fmt(median(rates.plain))}, number ${fmt(median(rates.number))} req/s`,
    );
    return [
      percentRow({
        measurement: '`GET /api/segment/number/{tag}`',
        value: median(rates.number),
        figure: `${fmt(median(rates.number))} req/s`,
        baselineValue: median(rates.plain),
        baseline: `\`GET /api/segment/get/{key}\` ${fmt(median(rates.plain))} req/s`,
        min: 0.5,
      }),
    ];
  } finally {
    await server.stop();
  }
}

/** Business numbers against the plain segment ID, in process and over HTTP. */
export const bench: BenchModule = {
  name: 'business-numbers',
  title: 'Business numbers',
  async run(context) {
    const rows = await inProcess(context);
    if (!context.skipHttp) rows.push(...(await http(context)));
    return rows;
  },
};

if (require.main === module) runAlone(bench);
