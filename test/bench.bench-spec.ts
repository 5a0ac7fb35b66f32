/**
 * `npm run bench` cannot rot: the script of package.json runs every benchmark of the table
 * in its quickest setting (`--quick`, about half a minute; the HTTP rows against the built
 * application started as a deployer starts it, with its defaults and with the access log
 * off) and must print one markdown table with a row for every measurement of
 * docs/benchmarks.md, no failed module, exit 0. Figures are not checked (the machine may be
 * loaded); that they exist is.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_MODULES, OPTIONAL_BENCH_MODULES } from '../bench/all.bench';
import { ratioCell, roundOrder } from '../bench/support/http-load';
import { medianInterval } from '../bench/support/report';
import { runScript, type ScriptResult } from './support/app-process';
import { describeWithServices } from './support/services';

const ROOT = join(__dirname, '..');

/** The run takes about half a minute, plus a build when dist/ is stale (the HTTP rows run it). */
const RUN_TIMEOUT_MS = 240_000;
jest.setTimeout(RUN_TIMEOUT_MS + 30_000);

/** Measurements the table must hold (issue 9, item 5), as patterns on the measurement cell. */
const EXPECTED_ROWS: RegExp[] = [
  /SegmentService\.getSync\(tag\)/,
  /SegmentGenerator\.next\(\)/,
  /await SegmentService\.get\(tag\)/,
  /GET \/api\/segment\/get\/\S+` throughput .*default configuration \(access log off\)/,
  /GET \/api\/segment\/get\/\S+` throughput .*access log on/,
  /segment `get` latency at a fixed .*default configuration/,
  /GET \/api\/segment\/ids\//,
  /GET \/api\/segment\/range\//,
  /one generator, `getIds\(4096\)`/,
  /of the layout limit/,
  /event-loop delay/,
  /GET \/api\/snowflake\/get\/\S+` throughput .*default configuration \(access log off\)/,
  /GET \/api\/snowflake\/get\/\S+` throughput .*access log on/,
  /snowflake `get` latency at a fixed .*default configuration/,
  /`await get\(tag\)` at .* step 1,000 /,
  /runway with the database unreachable/,
  /recovery once the database is back/,
  /IDs skipped per graceful restart/,
  /one range load \(`allocate`\)/,
  /`SegmentService\.getSync\(tag\)`, step 1,000,000/,
  /`GET \/api\/segment\/get\/\{key\}` throughput, .*every default but `LEAF_DB_URL`/,
  /one range load \(`allocate`, one transaction\), .* per database/,
  /start-up to the first snowflake ID, worker ID leased in PostgreSQL/,
  /start-up to the first snowflake ID, worker ID leased in MariaDB/,
  /`SegmentGenerator\.next\(\)` with tracing on and an SDK registered/,
  /TypeORM `repository\.insert\(row\)` with a Leaf segment ID/,
  /TypeORM `repository\.insert\(rows\)` with Leaf segment IDs/,
  /Drizzle `db\.insert\(table\)\.values\(row\)` with a Leaf segment ID/,
  /Drizzle `db\.insert\(table\)\.values\(rows\)` with Leaf segment IDs/,
  /MikroORM `em\.create\(Row, row\)` \+ `flush\(\)` with a Leaf segment ID/,
  /MikroORM 500 `em\.create` \+ one `flush\(\)` with Leaf segment IDs/,
  /Prisma `create\(\{ data \}\)` with a Leaf segment ID/,
  /Prisma `createMany\(\{ data \}\)` with Leaf segment IDs/,
  /`encodeIdText\(id, 'base62'\)`/,
  /`SnowflakeUuidV7\.fromId\(id\)`, a UUIDv7 from a snowflake ID/,
  /GET \/api\/segment\/get\/\{key\}` \(single ID\) with a client token checked/,
  /GET \/api\/segment\/ids\/\{key\}\?count=1000` \(batches of 1,000\) with a client token checked/,
  /forwarded batch of 1,000 items to the stand-in, signed and verified/,
  /forwarded single IDs through the application .*signed and verified/,
  /gapless confirmed numbers\/s, one series, 32 callers/,
];

interface TableRow {
  readonly benchmark: string;
  readonly measurement: string;
  readonly figure: string;
  readonly cells: string[];
}

/** The rows of the markdown table in `stdout` (header and separator left out). */
function tableRows(stdout: string): TableRow[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| benchmark |'))
    .map((line) => {
      const cells = line
        .slice(2, -2)
        .split(/(?<!\\) \| /)
        .map((cell) => cell.trim());
      return { benchmark: cells[0], measurement: cells[1], figure: cells[2], cells };
    });
}

/** The `scripts` of package.json. */
function npmScripts(): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  return manifest.scripts;
}

describe('the bench scripts of package.json', () => {
  it('run files that exist, and every module of the table runs alone through one', () => {
    const files = Object.entries(npmScripts())
      .filter(([name]) => name === 'bench' || name.startsWith('bench:'))
      .map(([, script]) => /(\S+\.bench\.ts)$/.exec(script)?.[1]);
    expect(files.filter((file) => file === undefined || !existsSync(join(ROOT, file)))).toEqual([]);
    for (const name of [...BENCH_MODULES, ...OPTIONAL_BENCH_MODULES]) {
      expect(files).toContain(`bench/${name}.bench.ts`);
    }
  });
});

describe('the statistics of the HTTP comparisons', () => {
  const range = (n: number) => Array.from({ length: n }, (_, i) => n - i); // n..1, unsorted

  it('gives the median a distribution-free 95 % interval from order statistics', () => {
    // n = 9: [x(2), x(8)], coverage 1 − 2·10/512; n = 12: [x(3), x(10)], 1 − 2·79/4096.
    expect(medianInterval(range(9))).toMatchObject({ median: 5, low: 2, high: 8, min: 1, max: 9 });
    expect(medianInterval(range(9)).coverage).toBeCloseTo(1 - 20 / 512, 10);
    expect(medianInterval(range(12))).toMatchObject({ median: 6.5, low: 3, high: 10 });
    expect(medianInterval(range(12)).coverage).toBeCloseTo(1 - 158 / 4096, 10);
    // Too few values for 95 %: no interval, the median and the range only.
    expect(medianInterval(range(5))).toMatchObject({ median: 3, low: null, high: null });
    expect(medianInterval([0.93])).toMatchObject({ median: 0.93, low: null, min: 0.93 });
  });

  it('pairs every application run with the bare run next to it, before and after in turn', () => {
    expect(roundOrder(0)).toEqual([1, 0, 2]);
    expect(roundOrder(1)).toEqual([2, 0, 1]);
    expect(ratioCell([0.9, 1.0, 1.1])).toBe('**100.0 %** (rounds 90.0–110.0 %, n = 3)');
    expect(ratioCell(range(9).map((x) => x / 10))).toBe(
      '**50.0 %** (95 % CI 20.0–80.0 %, rounds 10.0–90.0 %, n = 9)',
    );
  });
});

// ZooKeeper: the high-water mark's row (segment-high-water); PostgreSQL: segment-postgres.
describeWithServices(['mysql', 'postgres', 'zookeeper'], 'npm run bench -- --quick', () => {
  let result: ScriptResult;

  beforeAll(async () => {
    // The same file the npm script runs, through the same ts-node (transpile only).
    const file = /(\S+\.bench\.ts)$/.exec(npmScripts().bench)?.[1];
    expect(file).toBe('bench/all.bench.ts');
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (!/^(BENCH_|LEAF_(?!TEST_)|PORT$|HOST$)/.test(name)) env[name] = value;
    }
    result = await runScript(file!, ['--quick'], { env, timeoutMs: RUN_TIMEOUT_MS });
  });

  it('exits 0 and prints one table with a row for every measurement', () => {
    if (result.code !== 0) throw new Error(`exit ${result.code}\n${result.stderr.slice(-4000)}`);
    const rows = tableRows(result.stdout);
    for (const row of rows) expect(row.cells).toHaveLength(7);
    const failed = rows.filter((row) => row.figure.startsWith('FAILED:'));
    expect(failed).toEqual([]);
    // One section per module, each with at least one row.
    expect(rows.filter((row) => row.benchmark !== '')).toHaveLength(BENCH_MODULES.length);
    const missing = EXPECTED_ROWS.filter(
      (pattern) => !rows.some((row) => pattern.test(row.measurement)),
    );
    expect(missing).toEqual([]);
    expect(result.stdout).toMatch(/^Node v\d+.*quick/m);
  });
});
