/**
 * The packed nestjs-leaf as a package, before anyone runs it: the tarball that
 * test/consumer.e2e-spec.ts installs (same {@link packLibrary}) must pass publint (manifest,
 * `exports`, files) and Are the Types Wrong (types for every entry point under node10,
 * node16 from CommonJS and from ESM, bundler) without a single message, and an ES module
 * must see the same named exports as `require()` (the package is CommonJS; Node detects the
 * names, libs/leaf/README.md, *Module format*). `npm run lint:package -w nestjs-leaf` runs
 * the same two tools on libs/leaf.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ROOT,
  installPacked,
  linkRootPackages,
  packLibrary,
  packedTempDir,
  removePackedDirs,
} from './support/packed-library';

afterAll(() => removePackedDirs());

const ENTRY_POINTS = [
  'nestjs-leaf',
  'nestjs-leaf/health',
  'nestjs-leaf/testing',
  'nestjs-leaf/client',
  'nestjs-leaf/client/nest',
  'nestjs-leaf/otel',
  'nestjs-leaf/http',
  'nestjs-leaf/numbers',
  'nestjs-leaf/orm/sync',
  'nestjs-leaf/orm/typeorm',
  'nestjs-leaf/orm/prisma',
  'nestjs-leaf/formats',
  'nestjs-leaf/journal',
];

/** Runs a tool of the repository's node_modules/.bin on the tarball. */
function tool(name: string, args: string[]) {
  const run = spawnSync(process.execPath, [join(ROOT, 'node_modules', name), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the packed nestjs-leaf', () => {
  it('passes publint with no error, warning or suggestion', () => {
    const run = tool('publint/src/cli.js', ['run', packLibrary(), '--strict']);
    expect(run.output).not.toMatch(/Errors?:|Warnings?:|Suggestions?:/);
    expect(run.output).toContain('All good!');
    expect(run.status).toBe(0);
  });

  it('passes Are the Types Wrong for every entry point and resolution mode', () => {
    const run = tool('@arethetypeswrong/cli/dist/index.js', [
      packLibrary(),
      '--profile',
      'strict',
      '--format',
      'json',
    ]);
    expect(run.status).toBe(0);
    const report = JSON.parse(run.output) as {
      analysis: { problems: unknown[]; entrypoints: Record<string, unknown> };
    };
    expect(report.analysis.problems).toEqual([]);
    // Every subpath the package's "exports" lists, as the packed manifest has them.
    const { exports } = JSON.parse(
      readFileSync(join(ROOT, 'libs', 'leaf', 'package.json'), 'utf8'),
    ) as { exports: Record<string, unknown> };
    expect(Object.keys(report.analysis.entrypoints).sort()).toEqual(Object.keys(exports).sort());
    expect(Object.keys(exports)).toEqual(expect.arrayContaining(['./orm/typeorm', './server']));
  });

  it('ships its license, changelog and README, declares CommonJS, and every source map carries its sources', () => {
    const dir = packedTempDir('leaf-package-');
    installPacked(packLibrary(), dir);
    const pkgDir = join(dir, 'node_modules', 'nestjs-leaf');
    const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest.type).toBe('commonjs');
    expect(readFileSync(join(pkgDir, 'LICENSE'), 'utf8')).toContain('Apache License');
    expect(readFileSync(join(pkgDir, 'CHANGELOG.md'), 'utf8')).toContain(
      `## ${String(manifest.version)}`,
    );
    const maps = (readdirSync(join(pkgDir, 'dist'), { recursive: true }) as string[]).filter(
      (file) => file.endsWith('.map'),
    );
    expect(maps.length).toBeGreaterThan(50);
    for (const file of maps) {
      const map = JSON.parse(readFileSync(join(pkgDir, 'dist', file), 'utf8')) as {
        sources: string[];
        sourcesContent?: unknown[];
      };
      expect({ file, sources: map.sourcesContent?.length }).toEqual({
        file,
        sources: map.sources.length,
      });
    }
  });

  it('gives an ES module the same named exports as require(), on every entry point', () => {
    const dir = packedTempDir('leaf-esm-');
    installPacked(packLibrary(), dir);
    linkRootPackages(dir);
    writeFileSync(
      join(dir, 'check.mjs'),
      [
        "import { createRequire } from 'node:module';",
        'const require = createRequire(import.meta.url);',
        'const result = {};',
        `for (const entry of ${JSON.stringify(ENTRY_POINTS)}) {`,
        '  const namespace = await import(entry);',
        '  const required = require(entry);',
        '  const missing = Object.keys(required).filter((name) => !(name in namespace) || namespace[name] !== required[name]);',
        '  result[entry] = { names: Object.keys(required).length, missing };',
        '}',
        "const { LeafModule, IdService } = await import('nestjs-leaf');",
        'result.classes = [typeof LeafModule, typeof IdService];',
        'console.log(JSON.stringify(result));',
      ].join('\n'),
    );
    const run = spawnSync(process.execPath, ['check.mjs'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const result = JSON.parse(run.stdout.trim()) as Record<string, unknown>;
    for (const entry of ENTRY_POINTS) {
      expect(result[entry]).toEqual({ names: expect.any(Number), missing: [] });
      // Not an empty module (nestjs-leaf/orm/prisma's one value is leafPrismaIds).
      expect((result[entry] as { names: number }).names).toBeGreaterThanOrEqual(1);
    }
    expect(result.classes).toEqual(['function', 'function']);
  });
});
