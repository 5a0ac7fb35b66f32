/**
 * The consumer test of one ORM integration, from its page's own words (docs/integrations/
 * <page>.md, `## Set it up`; test/support/readme-setup.ts reads them): a fresh Nest 12
 * application on Node 24 from `npx @nestjs/cli@12 new`, set up as libs/leaf/README.md's
 * _Install_ and _Setup_ say (the packed tarball in place of the package name), then as the
 * ORM's section says — its install commands, its files (written as they are) and its SQL — and
 * built with the app's own `npm run build`. On MariaDB, the page's `## On MariaDB or MySQL`
 * gives whole files and their install commands, which the MariaDB copy of the application
 * installs and writes over the section's (`mariadbOverlay`). Where the section says so, the first start stops at the
 * missing tags (`warmTags`) with `LEAF_TAG_NOT_FOUND`, after Leaf's migrations have run.
 *
 * The section's `npm install` commands run before its files are written, its other commands
 * (`npx prisma generate`) after them, before the build. On MariaDB the application is a copy
 * changed as the section's sentence on MariaDB says (`prepare`).
 *
 * The spec adds one file of its own, `src/leaf-consumer-check.ts`: it starts the README's
 * `AppModule` (`NestFactory.createApplicationContext`) and, through the ORM and the README's
 * entities, creates a row, creates rows in bulk, creates a parent with children, rolls a
 * transaction back and upserts; then prints what it did and every row it reads back as one
 * `LEAF_CHECK <json>` line (one program for both databases, or one each where the ORM's calls
 * differ). It runs on a private PostgreSQL database and on a private MariaDB database
 * (`DATABASE_URL`), and the suite checks the rows with SQL of its own: every ID a positive
 * BIGINT, unique, the one the ORM returned, a segment ID within its tag's allocated ranges, the
 * children's `order_id` their parent's, no row of the rolled-back transaction.
 */
import { join } from 'node:path';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from 'nestjs-leaf';
import {
  StepTimes,
  childEnv,
  installedVersion,
  nodeRuntime,
  run,
  writeFiles,
  type NodeRuntime,
} from '../support/consumer-app';
import { packLibrary, packedTempDir, removePackedDirs } from '../support/packed-library';
import {
  createPostgresTestDatabase,
  type PostgresTestDatabase,
} from '../support/postgres-database';
import {
  mariadbOverlay,
  pageIntegration,
  readmeSetup,
  sqlStatements,
  type ReadmeIntegration,
  type ReadmeSetup,
} from '../support/readme-setup';
import { describeWithServices } from '../support/services';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const MINUTE = 60_000;
/** The marker of the check program's report line. */
const REPORT = 'LEAF_CHECK ';

export type ConsumerDatabase = 'postgres' | 'mariadb';

/** What `src/leaf-consumer-check.ts` prints (IDs as decimal strings). */
export interface CheckReport {
  /** One row created alone. */
  readonly created: string;
  /** The IDs of rows created in one bulk call. */
  readonly bulk: string[];
  /** A parent created with its children in one call. */
  readonly parent: string;
  readonly children: string[];
  /** The error message of the transaction that threw (its rows must be absent). */
  readonly rolledBack: string;
  /** The unique value the rolled-back transaction inserted. */
  readonly rolledBackReference: string;
  /** An upsert that inserted, then the same upsert again: the row keeps its ID. */
  readonly upsertFirst: string;
  readonly upsertSecond: string;
  /** Each table's IDs as the ORM reads them back. */
  readonly tables: Record<string, string[]>;
}

export interface OrmConsumer {
  /** A short name for directories and titles. */
  readonly name: string;
  /** The check program (`src/leaf-consumer-check.ts`), written by the spec; or one per database. */
  readonly check: string | ((database: ConsumerDatabase) => string);
  /** The ORM's page, docs/integrations/<page>.md: its `## Set it up` makes the application. */
  readonly page: string;
  /**
   * The page has `## On MariaDB or MySQL`, whose packages and files the MariaDB application
   * installs and writes over those of `## Set it up`.
   */
  readonly mariadbSection?: boolean;
  /**
   * The section says the first start stops at the missing tags (`warmTags`): the suite expects
   * that start to fail with `LEAF_TAG_NOT_FOUND`, then runs the SQL. Else the first start
   * succeeds.
   */
  readonly firstStartStopsAtMissingTag?: boolean;
  /** Tables the check fills: table → the `leaf_alloc` tag of its IDs, or 'snowflake'. */
  readonly tables: Record<string, string>;
  /** The table whose rows hold `rolledBackReference` in the column `reference`. */
  readonly referenceTable: string;
  /**
   * Changes to the README's application for a database, as the section says (Prisma on
   * MariaDB: its provider line, adapter and package); before the section's build steps.
   */
  readonly prepare?: (app: AppContext, database: ConsumerDatabase) => Promise<void>;
  /** Environment of the build steps and the check beyond `DATABASE_URL` (per database). */
  readonly env?: (database: ConsumerDatabase, url: string) => Record<string, string>;
}

export interface AppContext {
  readonly dir: string;
  readonly node: NodeRuntime;
  readonly integration: ReadmeIntegration;
  run(argv: string[], extraEnv?: Record<string, string>): Promise<string>;
}

/**
 * The check program (`src/leaf-consumer-check.ts`) around a spec's part: `head` (its imports,
 * `module` among them), then `body`, which runs in the started application context `app` and
 * declares the {@link CheckReport} `report` that is printed. With the argument `init` the
 * program only starts the application (Leaf's migrations run) and stops.
 */
export function checkProgram(head: string, body: string, module = 'AppModule'): string {
  return `import { NestFactory } from '@nestjs/core';
${head}
async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(${module}, { logger: ['error', 'warn'] });
  try {
    if (process.argv[2] === 'init') return;
${body}    console.log('${REPORT}' + JSON.stringify(report));
  } finally {
    await app.close();
  }
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;
}

export function ormConsumerAppSuite(orm: OrmConsumer): void {
  const title = `a Nest 12 app from \`npx @nestjs/cli@12 new\` with ${orm.name}, set up as docs/integrations/${orm.page}.md says`;
  describeWithServices(['postgres', 'mysql'], title, () => {
    const times = new StepTimes();
    const timed = <T>(step: string, work: () => Promise<T>) => times.timed(step, work);
    let node: NodeRuntime;
    let setup: ReadmeSetup;
    let integration: ReadmeIntegration;
    let work: string;
    const databases: { postgres?: PostgresTestDatabase; mariadb?: TestDatabase } = {};
    const reports: Partial<Record<ConsumerDatabase, CheckReport>> = {};
    /** The output of a first start that stopped at the missing tags. */
    const firstStarts: Partial<Record<ConsumerDatabase, string>> = {};

    const appDir = (database: ConsumerDatabase) => join(work, `app-${database}`);
    const context = (database: ConsumerDatabase): AppContext => ({
      dir: appDir(database),
      node,
      integration,
      run: async (argv, extraEnv = {}) =>
        (
          await run(argv, {
            cwd: appDir(database),
            env: childEnv(node, extraEnv),
            timeoutMs: 10 * MINUTE,
          })
        ).output,
    });
    const query = async (database: ConsumerDatabase, sql: string): Promise<unknown[]> =>
      database === 'postgres'
        ? ((await databases.postgres!.query(sql)) as unknown[])
        : ((await databases.mariadb!.query(sql)) as unknown[]);

    beforeAll(async () => {
      setup = readmeSetup(12);
      integration = pageIntegration(orm.page);
      node = nodeRuntime(24);
      const tarball = packLibrary();
      work = packedTempDir(`leaf-orm-app-${orm.name.toLowerCase()}-`);
      databases.postgres = await createPostgresTestDatabase();
      databases.mariadb = await createTestDatabase();

      await timed('npx @nestjs/cli@12 new', () =>
        run(
          [
            'npx',
            '--yes',
            '@nestjs/cli@12',
            'new',
            'app-postgres',
            '--skip-git',
            '--skip-install',
            '--package-manager',
            'npm',
            '--no-observe',
          ],
          { cwd: work, env: childEnv(node), timeoutMs: 5 * MINUTE },
        ),
      );
      const app = appDir('postgres');
      const installs = (argv: string[]) => argv[0] === 'npm';
      const commands = [...setup.install, ...integration.install.filter(installs)].map((argv) =>
        argv.map((word) => (word === 'nestjs-leaf' ? tarball : word)),
      );
      for (const argv of commands) {
        await timed(argv.join(' ').replace(tarball, 'nestjs-leaf'), () =>
          run(argv, { cwd: app, env: childEnv(node), timeoutMs: 15 * MINUTE }),
        );
      }
      writeFiles(app, setup.files.express);
      writeFiles(app, integration.files);
      // The same application for MariaDB: a copy, so that its files and steps may differ.
      await run(['cp', '-a', app, appDir('mariadb')], {
        cwd: work,
        env: childEnv(node),
        timeoutMs: 5 * MINUTE,
      });

      for (const database of ['postgres', 'mariadb'] as const) {
        const ctx = context(database);
        if (database === 'mariadb' && orm.mariadbSection) {
          const overlay = mariadbOverlay(orm.page);
          if (Object.keys(overlay.files).length === 0)
            throw new Error(
              `docs/integrations/${orm.page}.md: no files under "On MariaDB or MySQL"`,
            );
          for (const argv of overlay.install)
            await timed(`${argv.join(' ')} (mariadb)`, () => ctx.run(argv));
          writeFiles(ctx.dir, overlay.files);
        }
        const check = typeof orm.check === 'string' ? orm.check : orm.check(database);
        writeFiles(ctx.dir, { 'src/leaf-consumer-check.ts': check });
        const url = database === 'postgres' ? databases.postgres!.url : databases.mariadb!.url;
        const env = { DATABASE_URL: url, ...orm.env?.(database, url) };
        if (orm.prepare) await timed(`prepare (${database})`, () => orm.prepare!(ctx, database));
        for (const argv of integration.install.filter((words) => !installs(words)))
          await timed(`${argv.join(' ')} (${database})`, () => ctx.run(argv, env));
        await timed(`npm run build (${database})`, () => ctx.run(['npm', 'run', 'build']));
        // The first start runs Leaf's migrations (Setup's `migrationsRun`); then the SQL.
        const first = timed(`first start (${database})`, () =>
          ctx.run(['node', 'dist/leaf-consumer-check.js', 'init'], env),
        );
        if (orm.firstStartStopsAtMissingTag) {
          const error = await first.then(
            () => new Error('the first start succeeded'),
            (failed: Error) => failed,
          );
          if (!/LEAF_TAG_NOT_FOUND|TagNotFoundError/.test(error.message))
            throw new Error(`the first start did not stop at the missing tag: ${error.message}`);
          firstStarts[database] = error.message;
        } else {
          await first;
        }
        for (const statement of sqlStatements([...setup.sql, ...integration.sql]))
          await query(database, statement);
        const output = await timed(`check (${database})`, () =>
          ctx.run(['node', 'dist/leaf-consumer-check.js'], env),
        );
        const line = output.split('\n').find((text) => text.startsWith(REPORT));
        if (!line) throw new Error(`the check printed no ${REPORT}line:\n${output.slice(-4000)}`);
        reports[database] = JSON.parse(line.slice(REPORT.length)) as CheckReport;
      }
    }, 40 * MINUTE);

    afterAll(async () => {
      await databases.postgres?.drop();
      await databases.mariadb?.drop();
      if (!process.env.LEAF_CONSUMER_KEEP) removePackedDirs();
      console.log(times.report(`${orm.name}`));
    }, 2 * MINUTE);

    it('installs the packed nestjs-leaf and the section’s packages with the page’s commands', () => {
      for (const argv of integration.install) {
        expect(argv[0]).toMatch(/^(npm|npx)$/);
        expect(argv).not.toContain('--force');
        expect(argv).not.toContain('--legacy-peer-deps');
      }
      expect(installedVersion(appDir('postgres'), '@nestjs/core')).toMatch(/^12\./);
      expect(Object.keys(integration.files).length).toBeGreaterThan(0);
    });

    describe.each(['postgres', 'mariadb'] as const)('on %s', (database) => {
      const report = () => reports[database]!;
      const ids = (table: string) => report().tables[table] ?? [];

      it('creates a row, rows in bulk and a parent with its children, each with a new Leaf ID', () => {
        // The parents share a table (and a tag); the children have their own.
        const parents = [report().created, ...report().bulk, report().parent];
        for (const id of [...parents, ...report().children]) expect(id).toMatch(/^[1-9]\d{0,18}$/);
        expect(new Set(parents).size).toBe(parents.length);
        expect(new Set(report().children).size).toBe(report().children.length);
        expect(report().bulk.length).toBeGreaterThan(1);
        expect(report().children.length).toBeGreaterThan(0);
      });

      it('writes exactly the IDs the ORM returned, each unique and a valid ID of its mode', async () => {
        for (const [table, source] of Object.entries(orm.tables)) {
          // As text: a BIGINT never passes through a JavaScript number here either.
          const cast = database === 'postgres' ? 'CAST(id AS TEXT)' : 'CAST(id AS CHAR)';
          const rows = (await query(database, `SELECT ${cast} AS id FROM ${table}`)) as Array<{
            id: string;
          }>;
          const stored = rows.map((row) => BigInt(row.id));
          expect(stored.map(String).sort()).toEqual([...ids(table)].sort());
          expect(new Set(stored).size).toBe(stored.length);
          if (source === 'snowflake') {
            // Embedded worker 0 (the README's module), issued during this run.
            for (const id of stored) {
              const decoded = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH).decode(id);
              expect(decoded.workerId).toBe(0);
              expect(Math.abs(decoded.timestamp - Date.now())).toBeLessThan(30 * MINUTE);
            }
            continue;
          }
          const maxId = database === 'postgres' ? 'CAST(max_id AS TEXT)' : 'CAST(max_id AS CHAR)';
          const [alloc] = (await query(
            database,
            `SELECT ${maxId} AS max_id FROM leaf_alloc WHERE biz_tag = '${source}'`,
          )) as Array<{ max_id: string }>;
          for (const id of stored) {
            expect(id).toBeGreaterThan(0n);
            expect(id).toBeLessThanOrEqual(BigInt(alloc.max_id));
          }
        }
        const everyId = [report().created, ...report().bulk, report().parent, ...report().children];
        const written = new Set(Object.values(report().tables).flat());
        for (const id of everyId) expect(written.has(id)).toBe(true);
      });

      if (orm.firstStartStopsAtMissingTag) {
        it('stops at the first start with LEAF_TAG_NOT_FOUND, as the section says, after Leaf’s migrations', async () => {
          expect(firstStarts[database]).toMatch(/LEAF_TAG_NOT_FOUND|TagNotFoundError/);
          // The migrations ran: the SQL's INSERT INTO leaf_alloc found the table.
          const tags = (await query(database, 'SELECT biz_tag FROM leaf_alloc')) as unknown[];
          expect(tags.length).toBeGreaterThan(0);
        });
      }

      if ('order_lines' in orm.tables) {
        it('writes each child with its parent’s ID as order_id', async () => {
          const cast =
            database === 'postgres' ? 'CAST(order_id AS TEXT)' : 'CAST(order_id AS CHAR)';
          const rows = (await query(
            database,
            `SELECT ${cast} AS order_id FROM order_lines`,
          )) as Array<{ order_id: string }>;
          expect(rows.map((row) => row.order_id)).toEqual(
            report().children.map(() => report().parent),
          );
        });
      }

      it('writes nothing of a transaction that rolled back', async () => {
        expect(report().rolledBack).toMatch(/roll/i);
        const rows = (await query(
          database,
          `SELECT id FROM ${orm.referenceTable} WHERE reference = '${report().rolledBackReference}'`,
        )) as unknown[];
        expect(rows).toEqual([]);
      });

      it('upserts: the row inserted first keeps its ID when the same upsert runs again', () => {
        expect(report().upsertFirst).toMatch(/^[1-9]\d*$/);
        expect(report().upsertSecond).toBe(report().upsertFirst);
      });
    });
  });
}
