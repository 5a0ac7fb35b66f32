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

describeWithServices(['mysql'], 'npm run bench -- --quick', () => {
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
