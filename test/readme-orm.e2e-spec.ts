/**
 * The README's ORM sections (`## IDs as Drizzle defaults`, `## IDs on your MikroORM
 * entities`, libs/leaf/README.md) do what they say, read from the README's own blocks
 * (test/support/readme-setup.ts): their install commands are plain and name packages this
 * repository has; their files, with Setup's `src/main.ts`, type-check as written (and so do
 * the examples of docs/integrations/drizzle.md and mikro-orm.md); and on a
 * fresh PostgreSQL database the application they make runs as the section tells — the first
 * start stops at the missing tag (`TagNotFoundError`), the section's SQL adds the table and the
 * tag, and the next start answers `POST /orders` with the first ID as a decimal string.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { TagNotFoundError } from 'nestjs-leaf/errors';
import { createPostgresTestDatabase } from './support/postgres-database';
import { fencedBlocks, readmeIntegration, readmeSetup } from './support/readme-setup';
import { describeWithServices } from './support/services';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..');
/** Inside the repository, so that the files resolve its node_modules and the library's paths. */
const WORK = join(ROOT, '.builds', `readme-orm-${randomBytes(4).toString('hex')}`);

/** The integration pages, whose examples (path-named ```ts blocks) must type-check too. */
const PAGES = ['drizzle', 'mikro-orm'];

const SECTIONS = [
  { title: 'IDs as Drizzle defaults', dir: 'drizzle' },
  { title: 'IDs on your MikroORM entities', dir: 'mikro-orm' },
] as const;

/** The package name of an `npm install` argument (`@scope/name@^1` → `@scope/name`). */
function packageName(spec: string): string {
  const at = spec.indexOf('@', 1);
  return at < 0 ? spec : spec.slice(0, at);
}

beforeAll(() => {
  const main = readmeSetup(12).files.express['src/main.ts'];
  for (const { title, dir } of SECTIONS) {
    const files = { 'src/main.ts': main, ...readmeIntegration(title).files };
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(WORK, dir, path)), { recursive: true });
      writeFileSync(join(WORK, dir, path), content);
    }
  }
  for (const page of PAGES) {
    const markdown = readFileSync(join(ROOT, 'docs', 'integrations', `${page}.md`), 'utf8');
    for (const block of fencedBlocks(markdown).filter((b) => b.lang === 'ts')) {
      const [first, ...rest] = block.body.split('\n');
      const path = /^\/\/\s*(src\/\S+\.ts)\s*$/.exec(first)?.[1];
      if (!path) continue;
      mkdirSync(dirname(join(WORK, `docs-${page}`, path)), { recursive: true });
      writeFileSync(join(WORK, `docs-${page}`, path), `${rest.join('\n').trim()}\n`);
    }
  }
});

afterAll(() => rmSync(WORK, { recursive: true, force: true }));

describe.each(SECTIONS)('README, "$title"', ({ title }) => {
  it('installs with plain npm commands, packages this repository has', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const known = { ...manifest.dependencies, ...manifest.devDependencies };
    const { install } = readmeIntegration(title);
    expect(install.length).toBeGreaterThan(0);
    for (const argv of install) {
      expect(argv.slice(0, 2)).toEqual(['npm', 'install']);
      for (const spec of argv.slice(2).filter((word) => !word.startsWith('-')))
        expect(Object.keys(known)).toContain(packageName(spec));
    }
  });

  it('has SQL for its table and its tag', () => {
    const sql = readmeIntegration(title).sql.join('\n');
    expect(sql).toMatch(/CREATE TABLE orders/);
    expect(sql).toMatch(/INSERT INTO leaf_alloc .*'orders'/);
  });
});

it("the sections' files type-check as written, beside Setup's src/main.ts, and so do the integration pages' examples", async () => {
  writeFileSync(
    join(WORK, 'tsconfig.json'),
    JSON.stringify({
      extends: '../../tsconfig.json',
      compilerOptions: { noEmit: true, incremental: false },
      include: ['*/src/**/*.ts'],
    }),
  );
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await promisify(execFile)(process.execPath, [tsc, '-p', WORK], {
    cwd: ROOT,
  }).catch((error: { stdout?: string; code?: number }) => error);
  expect(result.stdout).toBe('');
});

describeWithServices(['postgres'], "the README's ORM applications on PostgreSQL", () => {
  const running: INestApplication[] = [];

  afterAll(async () => {
    for (const app of running) await app.close();
  });

  async function boot(module: Type): Promise<NestFastifyApplication> {
    const app = await NestFactory.create<NestFastifyApplication>(module, new FastifyAdapter(), {
      logger: false,
      abortOnError: false,
    });
    try {
      await app.init();
      await app.getHttpAdapter().getInstance().ready();
    } catch (error) {
      await app.close();
      throw error;
    }
    running.push(app);
    return app;
  }

  it.each(SECTIONS)(
    '$title: the first start stops at the missing tag; after the SQL, POST /orders answers the first ID',
    async ({ title, dir }) => {
      const db = await createPostgresTestDatabase();
      try {
        process.env.DATABASE_URL = db.url;
        const { AppModule } = (await import(join(WORK, dir, 'src', 'app.module.ts'))) as {
          AppModule: Type;
        };
        await expect(boot(AppModule)).rejects.toBeInstanceOf(TagNotFoundError);

        for (const statement of readmeIntegration(title).sql.join('\n').split(/;\s*/))
          if (statement.trim() !== '') await db.query(statement);
        const app = await boot(AppModule);
        const response = await app.inject({
          method: 'POST',
          url: '/orders',
          payload: { name: 'first' },
        });
        expect(response.statusCode).toBe(201);
        expect(response.json()).toEqual({ id: '1', name: 'first' });
        expect(await db.query('SELECT id::text AS id, name FROM orders')).toEqual([
          { id: '1', name: 'first' },
        ]);
        await app.close();
        running.splice(running.indexOf(app), 1);
      } finally {
        delete process.env.DATABASE_URL;
        await db.drop();
      }
    },
  );
});
