/**
 * The cost of the ID formats (`npm run bench:formats`; a module of `npm run bench`;
 * docs/formats.md), in process, each against its baseline in the same run:
 *
 * - `encodeIdText(id, form)` (base62, base36, Crockford base32) against `id.toString()`, the
 *   decimal wire form (no goal: a plain digit loop, about 0.3 µs an ID).
 * - `SnowflakeUuidV7.fromId(id)` against `crypto.randomUUID()`. Goal: ≥ 100 %. The IDs are
 *   those of a busy worker (whole milliseconds of 4,096). Two more rows without a goal: each
 *   result dropped at once (the creation alone, no garbage kept), and one ID per millisecond,
 *   where each UUID also pays for its millisecond's text.
 * - `typeIdFromUuid(prefix, fromId(id))` against `crypto.randomUUID()` (no goal).
 * - `IdService.getTexts('snowflake', key, 4096, 'uuid')` against `getIds(key, 4096)` written
 *   in decimal: the whole in-process path, IDs taken from a live generator (no goal).
 * - `OpaqueIds.decode(encode(id))` (FF1 over AES, docs/public-ids.md) against
 *   `BigInt(id.toString())`, the decimal text written and read. Goal: ≥ 25 %. And the same in
 *   batches of 1,024 (`encodeAll`/`decodeAll`, one AES call per FF1 step for the batch; no goal).
 *
 * Each result is kept a while (a ring of 1,024), as a caller keeps what it asked for. The two
 * sides of a row run interleaved chunk by chunk (alternating which goes first) and are timed
 * in this process's CPU time, so other processes on a shared machine do not count; the figure
 * is the median of the per-round ratios with its 95 % interval.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { IdService, LeafModule, SnowflakeService } from 'nestjs-leaf';
import {
  DEFAULT_SNOWFLAKE_EPOCH,
  SnowflakeLayout,
  SnowflakeUuidV7,
  OpaqueIds,
  encodeIdText,
  typeIdFromUuid,
  type IdTextForm,
} from 'nestjs-leaf/formats';
import { LeafServer, ensureBuilt } from './support/leaf-server';
import {
  load,
  pinLoadGenerator,
  pinnedServerCpu,
  ratioCell,
  whilePinned,
} from './support/http-load';
import {
  fmt,
  fmtRate,
  median,
  medianInterval,
  type BenchContext,
  type BenchModule,
  type BenchRow,
} from './support/report';
import { runAlone } from './support/run';

/** Calls per timed chunk. */
const CHUNK = 50_000;
const FULL = { chunks: 10, rounds: 21 };
const QUICK = { chunks: 2, rounds: 3 };
const T0 = Date.UTC(2026, 0, 1);

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

/** One side of a comparison: runs `calls` calls (from `at` in the ID ring), returns a checksum. */
type Side = (at: number, calls: number) => number | Promise<number>;

/** IDs of one worker, `perMs` per millisecond, in issue order: a ring the calls go round. */
function idRing(layout: SnowflakeLayout, perMs: number, size: number): bigint[] {
  return Array.from({ length: size }, (_, i) =>
    layout.compose(T0 + Math.floor(i / perMs), 5, i % perMs),
  );
}

/**
 * The sides of the comparisons, each its own loop (one shared loop calling a function
 * argument would see six functions there and run each side slower than alone). Each result is
 * kept in a ring of 1,024, as a caller keeps what it asked for a while.
 */
function sidesOver(
  busy: readonly bigint[],
  sparse: readonly bigint[],
  uuids: SnowflakeUuidV7,
  opaque: OpaqueIds,
) {
  const kept = new Array<string>(1024).fill('');
  const m = busy.length - 1;
  const s = sparse.length - 1;
  const done = () => kept[0]!.length + kept[1023]!.length;
  const sides = {
    decimal: (at: number, calls: number) => {
      for (let i = 0; i < calls; i++) kept[i & 1023] = busy[(at + i) & m]!.toString();
      return done();
    },
    base62: (at: number, calls: number) => {
      for (let i = 0; i < calls; i++) kept[i & 1023] = encodeIdText(busy[(at + i) & m]!, 'base62');
      return done();
    },
    base36: (at: number, calls: number) => {
      for (let i = 0; i < calls; i++) kept[i & 1023] = encodeIdText(busy[(at + i) & m]!, 'base36');
      return done();
    },
    base32: (at: number, calls: number) => {
      for (let i = 0; i < calls; i++) kept[i & 1023] = encodeIdText(busy[(at + i) & m]!, 'base32');
      return done();
    },
    uuid: (at: number, calls: number) => {
      for (let i = 0; i < calls; i++) kept[i & 1023] = uuids.fromId(busy[(at + i) & m]!);
      return done();
    },
    sparseUuid: (at: number, calls: number) => {
      for (let i = 0; i < calls; i++) kept[i & 1023] = uuids.fromId(sparse[(at + i) & s]!);
      return done();
    },
    typeId: (at: number, calls: number) => {
      for (let i = 0; i < calls; i++) {
        kept[i & 1023] = typeIdFromUuid('order', uuids.fromId(busy[(at + i) & m]!));
      }
      return done();
    },
    random: (_at: number, calls: number) => {
      for (let i = 0; i < calls; i++) kept[i & 1023] = randomUUID();
      return done();
    },
    // The same two, each result dropped at once (only its length read).
    uuidDropped: (at: number, calls: number) => {
      let sum = 0;
      for (let i = 0; i < calls; i++) sum += uuids.fromId(busy[(at + i) & m]!).length;
      return sum;
    },
    randomDropped: (_at: number, calls: number) => {
      let sum = 0;
      for (let i = 0; i < calls; i++) sum += randomUUID().length;
      return sum;
    },
    // An ID written and read back: opaque, and decimal.
    opaque: (at: number, calls: number) => {
      let sum = 0n;
      for (let i = 0; i < calls; i++) sum += opaque.decode(opaque.encode(busy[(at + i) & m]!));
      return Number(sum & 1023n);
    },
    opaqueBatch: (at: number, calls: number) => {
      let sum = 0n;
      for (let i = 0; i < calls; i += 1024) {
        const ids = Array.from({ length: 1024 }, (_, k) => busy[(at + i + k) & m]!);
        for (const id of opaque.decodeAll(opaque.encodeAll(ids))) sum += id;
      }
      return Number(sum & 1023n);
    },
    decimalRoundTrip: (at: number, calls: number) => {
      let sum = 0n;
      for (let i = 0; i < calls; i++) sum += BigInt(busy[(at + i) & m]!.toString());
      return Number(sum & 1023n);
    },
  } satisfies Record<string, Side>;
  return sides;
}

/** `calls / CPU time` of each side over `chunks` chunks, interleaved. */
async function measurePair(
  subject: Side,
  baseline: Side,
  chunks: number,
  calls: number,
): Promise<{ subject: number; baseline: number }> {
  const elapsed = { subject: 0, baseline: 0 };
  let sink = 0;
  for (let c = 0; c < chunks; c++) {
    const order =
      c % 2 === 0 ? (['subject', 'baseline'] as const) : (['baseline', 'subject'] as const);
    for (const which of order) {
      const start = cpuMs();
      sink += await (which === 'subject' ? subject : baseline)(c * calls, calls);
      elapsed[which] += cpuMs() - start;
    }
    await yieldToLoop();
  }
  if (sink < 0) console.log(sink);
  const rate = (ms: number) => (calls * chunks) / (ms / 1000);
  return { subject: rate(elapsed.subject), baseline: rate(elapsed.baseline) };
}

interface Case {
  readonly measurement: string;
  readonly baselineLabel: string;
  readonly subject: Side;
  readonly baseline: Side;
  readonly goal: number | null;
  /** Calls per chunk (a batch call counts its IDs). */
  readonly calls?: number;
}

async function runCase(
  c: Case,
  chunks: number,
  rounds: number,
  log: (line: string) => void,
): Promise<BenchRow> {
  const calls = c.calls ?? CHUNK;
  await measurePair(c.subject, c.baseline, Math.max(1, chunks >> 1), calls); // warm-up
  const ratios: number[] = [];
  const subject: number[] = [];
  const baseline: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const rate = await measurePair(c.subject, c.baseline, chunks, calls);
    subject.push(rate.subject);
    baseline.push(rate.baseline);
    ratios.push(rate.subject / rate.baseline);
  }
  log(
    `formats: ${c.measurement}: ${fmtRate(median(subject))}/s against ${fmtRate(median(baseline))}/s ` +
      `(${rounds} rounds of ${chunks} × ${calls})`,
  );
  return {
    measurement: c.measurement,
    figure: `${fmtRate(median(subject))}/s`,
    baseline: `${c.baselineLabel}: ${fmtRate(median(baseline))}/s`,
    ratio: ratioCell(ratios),
    target: c.goal === null ? '—' : `≥ ${c.goal * 100} %`,
    met: c.goal === null ? null : median(ratios) >= c.goal,
  };
}

/** A LeafModule with embedded snowflake mode, for the service row. */
async function openService() {
  const stateDir = mkdtempSync(join(tmpdir(), 'leaf-bench-formats-'));
  const moduleRef = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      LeafModule.forRoot({
        segment: false,
        maxBatchSize: 4096,
        snowflake: { workerId: 1, stateDir },
      }),
    ],
  }).compile();
  moduleRef.useLogger(false);
  const app = await moduleRef.init();
  return {
    service: app.get(SnowflakeService),
    ids: app.get(IdService),
    close: async () => {
      await app.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

export const bench: BenchModule = {
  name: 'formats',
  title: 'ID formats',
  async run(context): Promise<BenchRow[]> {
    const { chunks, rounds } = context.quick ? QUICK : FULL;
    const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
    const busy = idRing(layout, 4096, 1 << 20);
    const sparse = idRing(layout, 1, 1 << 16);
    const opaque = new OpaqueIds([{ version: 1, key: Buffer.alloc(16, 0x5a) }]);
    const side = sidesOver(busy, sparse, new SnowflakeUuidV7(layout), opaque);
    const cases: Case[] = (['base62', 'base36', 'base32'] as IdTextForm[]).map((form) => ({
      measurement: `\`encodeIdText(id, '${form}')\`, a snowflake ID in fixed-width ${form}`,
      baselineLabel: '`id.toString()`',
      subject: side[form],
      baseline: side.decimal,
      goal: null,
    }));
    cases.push(
      {
        measurement:
          '`SnowflakeUuidV7.fromId(id)`, a UUIDv7 from a snowflake ID (4,096 IDs per ms)',
        baselineLabel: '`crypto.randomUUID()`',
        subject: side.uuid,
        baseline: side.random,
        goal: 1,
      },
      {
        measurement: '`SnowflakeUuidV7.fromId(id)`, the same, each result dropped at once',
        baselineLabel: '`crypto.randomUUID()`, dropped',
        subject: side.uuidDropped,
        baseline: side.randomDropped,
        goal: null,
      },
      {
        measurement: '`SnowflakeUuidV7.fromId(id)`, one ID per ms (each pays for its millisecond)',
        baselineLabel: '`crypto.randomUUID()`',
        subject: side.sparseUuid,
        baseline: side.random,
        goal: null,
      },
      {
        measurement: '`OpaqueIds.decode(encode(id))`, an opaque ID written and read (FF1, AES-128)',
        baselineLabel: '`BigInt(id.toString())`',
        subject: side.opaque,
        baseline: side.decimalRoundTrip,
        goal: 0.25,
        calls: 2048,
      },
      {
        measurement: '`decodeAll(encodeAll(ids))`, the same in batches of 1,024',
        baselineLabel: '`BigInt(id.toString())`',
        subject: side.opaqueBatch,
        baseline: side.decimalRoundTrip,
        goal: null,
        calls: 8192,
      },
      {
        measurement: "`typeIdFromUuid('order', fromId(id))`, a TypeID (4,096 IDs per ms)",
        baselineLabel: '`crypto.randomUUID()`',
        subject: side.typeId,
        baseline: side.random,
        goal: null,
      },
    );
    const rows: BenchRow[] = [];
    for (const c of cases) rows.push(await runCase(c, chunks, rounds, context.log));

    const { service, ids, close } = await openService();
    try {
      const batch = 4096;
      rows.push(
        await runCase(
          {
            measurement:
              "`IdService.getTexts('snowflake', key, 4096, 'uuid')`, IDs from a live generator (at most 4,096 per ms)",
            baselineLabel: '`getIds(key, 4096)` in decimal',
            subject: async (_at, calls) => {
              let sum = 0;
              for (let n = 0; n < calls; n += batch) {
                const uuids = await ids.getTexts('snowflake', 'bench', batch, 'uuid');
                for (const uuid of uuids) sum += uuid.length;
              }
              return sum;
            },
            baseline: async (_at, calls) => {
              let sum = 0;
              for (let n = 0; n < calls; n += batch) {
                for (const id of await service.getIds('bench', batch)) sum += id.toString().length;
              }
              return sum;
            },
            goal: null,
            calls: batch * 8,
          },
          chunks,
          rounds,
          context.log,
        ),
      );
    } finally {
      await close();
    }
    if (!context.skipHttp) rows.push(...(await opaqueRouteRows(context)));
    return rows;
  },
};

/** The application's ID routes with `?format=opaque` (and `opaque-uuid`) against without. */
const OPAQUE_ROUTES = [
  { label: '`GET /api/snowflake/get/{key}?format=opaque`', path: 'get/orders', format: 'opaque' },
  {
    label: '`GET /api/snowflake/ids/{key}?count=100&format=opaque`',
    path: 'ids/orders?count=100',
    format: 'opaque',
  },
  {
    label: '`GET /api/snowflake/ids/{key}?count=100&format=opaque-uuid`',
    path: 'ids/orders?count=100',
    format: 'opaque-uuid',
  },
] as const;

/**
 * One application process with `LEAF_OPAQUE_KEYS`, each route loaded with and without
 * `format` in alternating order, round after round (the same process: only the format
 * differs). Goal: ≥ 90 % of the throughput without.
 */
async function opaqueRouteRows(context: BenchContext): Promise<BenchRow[]> {
  ensureBuilt(context.log);
  context.log(`opaque routes: ${pinLoadGenerator()}`);
  const key = Buffer.alloc(16, 0x5a).toString('base64');
  const server = await LeafServer.start(
    'LEAF_OPAQUE_KEYS',
    { LEAF_OPAQUE_KEYS: `v1:${key}`, LEAF_WORKER_ID: '1', LEAF_SEGMENT_ENABLED: 'false' },
    { cpu: pinnedServerCpu() },
  );
  const rows: BenchRow[] = [];
  try {
    for (const route of OPAQUE_ROUTES) {
      const base = `http://127.0.0.1:${server.port}/api/snowflake/${route.path}`;
      const urls = {
        with: `${base}${route.path.includes('?') ? '&' : '?'}format=${route.format}`,
        without: base,
      };
      const rps = { with: [] as number[], without: [] as number[] };
      const rounds = context.quick ? 2 : context.rounds;
      await whilePinned(async () => {
        for (let round = 0; round < rounds; round++) {
          const order =
            round % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const);
          for (const side of order) {
            const run = await load(urls[side], {
              durationSec: context.roundSeconds,
              connections: context.connections,
            });
            if (run.errors + run.non2xx > 0)
              throw new Error(`${urls[side]}: errors or non-2xx answers`);
            rps[side].push(run.requestsPerSec);
          }
        }
      });
      const ratios = rps.with.map((value, i) => value / rps.without[i]!);
      rows.push({
        measurement: `${route.label}, ${context.connections} connections`,
        figure: `${fmt(median(rps.with))} req/s`,
        baseline: `the same route without \`format\`: ${fmt(median(rps.without))} req/s`,
        ratio: ratioCell(ratios),
        target: '≥ 90 %',
        met: medianInterval(ratios).median >= 0.9,
      });
    }
  } finally {
    await server.stop();
  }
  return rows;
}

if (require.main === module) runAlone(bench);
