/**
 * The `## Set it up` sections of docs/integrations/drizzle.md and mikro-orm.md do what they
 * say, read from their own blocks (test/support/readme-setup.ts): their install commands are
 * plain and name packages this repository has; their files, with the package README's Setup
 * `src/database.ts` and `src/main.ts`, type-check as written, and so do they with the pages'
 * "On MariaDB or MySQL" files in place of the section's of the same path; and the application
 * each makes runs as the section tells, on a fresh PostgreSQL database (the section's files)
 * and on a fresh MariaDB database (the page's in their place): the first start stops at the
 * missing tags (`TagNotFoundError`), the section's SQL adds the tables and the tags, and the
 * next start answers `POST /orders` exactly as the section's sentence says.
 *
 * The fresh applications of test/consumer-apps/orm-drizzle and orm-mikro-orm build the same
 * files with the packed library; here they run inside the repository, in Jest.
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
import {
  integrationPage,
  mariadbOverlay,
  pageIntegration,
  readmeSections,
  SET_IT_UP,
  readmeSetup,
  sqlStatements,
} from './support/readme-setup';
import { describeWithServices } from './support/services';
import { createTestDatabase } from './support/test-database';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..');
/** Inside the repository, so that the files resolve its node_modules and the library's paths. */
const WORK = join(ROOT, '.builds', `readme-orm-${randomBytes(4).toString('hex')}`);

const SECTIONS = [
  { title: 'docs/integrations/drizzle.md', page: 'drizzle' },
  { title: 'docs/integrations/mikro-orm.md', page: 'mikro-orm' },
] as const;

/** The section's sentence "`POST /orders` with `<body>` answers `<json>`", as objects. */
function postOrders(page: string): { payload: Record<string, unknown>; answer: unknown } {
  const section = readmeSections(integrationPage(page), (h) => h === SET_IT_UP);
  const match = /`POST \/orders` with `([^`]+)` answers\s+`([^`]+)`/.exec(section);
  if (!match) throw new Error(`${page}.md: no sentence "POST /orders with ... answers ..."`);
  return { payload: JSON.parse(match[1]) as Record<string, unknown>, answer: JSON.parse(match[2]) };
}

/** The package name of an `npm install` argument (`@scope/name@^1` → `@scope/name`). */
function packageName(spec: string): string {
  const at = spec.indexOf('@', 1);
  return at < 0 ? spec : spec.slice(0, at);
}

/**
 * Writes `files` under `dir`. Jest resolves no `./x.js` import to `./x.ts` (tsc and the
 * applications' builds do): here the relative imports lose their `.js`.
 */
function writeApp(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(WORK, dir, path)), { recursive: true });
    writeFileSync(join(WORK, dir, path), content.replace(/(from '\.\/[^']+)\.js'/g, "$1'"));
  }
}

beforeAll(() => {
  const setup = readmeSetup(12).files.express;
  const base = { 'src/main.ts': setup['src/main.ts'], 'src/database.ts': setup['src/database.ts'] };
  for (const { page } of SECTIONS) {
    const files = { ...base, ...pageIntegration(page).files };
    writeApp(`${page}-postgres`, files);
    writeApp(`${page}-mariadb`, { ...files, ...mariadbOverlay(page).files });
  }
});

afterAll(() => rmSync(WORK, { recursive: true, force: true }));

describe.each(SECTIONS)('$title, "Set it up"', ({ page }) => {
  it("installs with plain npm commands, packages this repository has (the page's too)", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const known = { ...manifest.dependencies, ...manifest.devDependencies };
    const { install } = pageIntegration(page);
    expect(install.length).toBeGreaterThan(0);
    for (const argv of [...install, ...mariadbOverlay(page).install]) {
      expect(argv.slice(0, 2)).toEqual(['npm', 'install']);
      for (const spec of argv.slice(2).filter((word) => !word.startsWith('-')))
        expect(Object.keys(known)).toContain(packageName(spec));
    }
  });

  it('has SQL for its tables and their tags; the page replaces files of the section', () => {
    const sql = pageIntegration(page).sql.join('\n');
    expect(sql).toMatch(/CREATE TABLE orders \(/);
    expect(sql).toMatch(/CREATE TABLE order_lines \(/);
    expect(sql).toMatch(/INSERT INTO leaf_alloc .*'orders'.*'order-lines'/);
    const replaced = Object.keys(mariadbOverlay(page).files);
    expect(replaced.length).toBeGreaterThan(0);
    for (const path of replaced) expect(Object.keys(pageIntegration(page).files)).toContain(path);
  });
});

it("the sections' files type-check as written, beside Setup's, and so do they with the pages' MariaDB files", async () => {
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

const DATABASES = [
  { kind: 'postgres', label: 'PostgreSQL', create: createPostgresTestDatabase },
  { kind: 'mysql', label: 'MariaDB', create: createTestDatabase },
] as const;

for (const { kind, label, create } of DATABASES) {
  describeWithServices([kind], `the README's ORM applications on ${label}`, () => {
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
      '$title: the first start stops at the missing tags; after the SQL, POST /orders answers as the section says',
      async ({ page }) => {
        const db = await create();
        try {
          process.env.DATABASE_URL = db.url;
          const dir = `${page}-${kind === 'postgres' ? 'postgres' : 'mariadb'}`;
          const { AppModule } = (await import(join(WORK, dir, 'src', 'app.module.ts'))) as {
            AppModule: Type;
          };
          await expect(boot(AppModule)).rejects.toBeInstanceOf(TagNotFoundError);

          for (const statement of sqlStatements(pageIntegration(page).sql))
            await db.query(statement);
          const app = await boot(AppModule);
          const { payload, answer } = postOrders(page);
          const response = await app.inject({ method: 'POST', url: '/orders', payload });
          expect(response.statusCode).toBe(201);
          expect(response.json()).toEqual(answer);
          const text = kind === 'postgres' ? 'TEXT' : 'CHAR';
          expect(
            await db.query(
              `SELECT CAST(o.id AS ${text}) AS id, o.reference, CAST(l.id AS ${text}) AS line, l.sku ` +
                'FROM orders o JOIN order_lines l ON l.order_id = o.id',
            ),
          ).toEqual([{ id: '1', reference: 'A-1', line: '1', sku: 'x' }]);
          await app.close();
          running.splice(running.indexOf(app), 1);
        } finally {
          delete process.env.DATABASE_URL;
          await db.drop();
        }
      },
    );
  });
}
