/**
 * The application's migrations (migrations/: the library's, then the app's demo-tag seed) as
 * an operator runs them, as child processes from the repository root:
 * - the migration command of the image, `node dist/src/database/migrate.js [run|status|revert]`
 *   (src/database/migrate.ts):
 *   - on SQLite, the compiled script with plain `node` (no ts-node, as in the image) when
 *     `npm run build` has run (always in CI), else through ts-node;
 *   - on MariaDB (the same `migrate` function, in this process: the SQLite run proves the
 *     script), in a throw-away database `leaf_migrate_test_<random>`,
 *     with the accounts of docker-compose.yml: the SQL of deploy/compose/10-leaf-users.sh and
 *     grant-app.sh, run with throw-away user names. The migration account migrates; the service account, with
 *     SELECT, UPDATE on leaf_alloc only, then serves IDs from the real application;
 * - the TypeORM CLI on MariaDB with `NODE_ENV=production` and `LEAF_DB_URL` only:
 *   `npx typeorm migration:show|run|revert -d dist/migrations/data-source.js` (built; else
 *   the development form on migrations/data-source.ts through ts-node).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { Client as PgClient } from 'pg';
import { migrate as runMigration, type MigrateCommand } from '../src/database/migrate';
import { tempDir } from './support/app';
import { AppProcess, killAllAppProcesses } from './support/app-process';
import { HttpClient } from './support/http-client';
import { describeWithServices, isCi, POSTGRES_TEST_URL } from './support/services';
import { MYSQL_SERVER_URL, createTestDatabase, type TestDatabase } from './support/test-database';
import { createPostgresTestDatabase, type PostgresTestDatabase } from './support/postgres-database';

const ROOT = join(__dirname, '..');
const COMPILED = 'dist/src/database/migrate.js';
const CLI_DATA_SOURCE = 'dist/migrations/data-source.js';
const LIBRARY = 'CreateLeafAlloc1700000000000';
/** The library's trigger that refuses a lowered max_id (a no-op on SQLite). */
const GUARD = 'GuardLeafAllocMaxId1700000000001';
/** The library's residue-class columns (several databases per tag). */
const CLASS = 'AddLeafAllocResidueClass1700000000002';
/** The library's snowflake worker-ID lease table. */
const LEASE = 'CreateLeafWorkerLease1700000000004';
/** The library's table of business-number formats. */
const FORMATS = 'CreateLeafNumberFormat1700000000005';
/** The library's ID journal (leaf_alloc_journal, leaf_worker_lease_journal). */
const JOURNAL = 'CreateLeafIdJournal1700000000006';
/** The library's gapless-series tables. */
const GAPLESS = 'CreateLeafGapless1700000000007';
/** The library's table of the database-held sequence election. */
const ISSUER = 'CreateLeafSequenceIssuer1700000000003';
const SEED = 'SeedDemoTag1796304233815';
jest.setTimeout(120_000);

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the migration script with exactly `env` (plus PATH/HOME), from the repository root. */
function migrate(args: string[], env: Record<string, string>, compiled: boolean): Promise<Run> {
  const argv = compiled
    ? [COMPILED, ...args]
    : [
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        'src/database/migrate.ts',
        ...args,
      ];
  return run(process.execPath, argv, env);
}

/**
 * The same migration in this process (`migrate` of src/database/migrate.ts, which the script
 * runs): for the checks that need no process of their own; the SQLite run above spawns the
 * compiled script as the image does.
 */
async function migrateInProcess(
  command: MigrateCommand,
  env: Record<string, string>,
): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runMigration(
    command,
    env,
    (line) => out.push(`${line}\n`),
    (line) => err.push(`${line}\n`),
  );
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/**
 * Reverts `names` one by one, in this order, in this process: the steps between the script's
 * own runs, which a process each would only make slower (a node start-up per migration).
 */
async function revertInProcess(env: Record<string, string>, names: string[]): Promise<void> {
  for (const name of names)
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${name}`);
}

/**
 * `npx typeorm <command> -d dist/migrations/data-source.js` when built, else the development
 * form of package.json (`npm run migration:<command>`: ts-node on migrations/data-source.ts).
 */
function typeormCli(
  command: string,
  env: Record<string, string>,
  compiled: boolean,
  options: { npx?: boolean } = {},
): Promise<Run> {
  // `npx typeorm` (the documented command) once; otherwise the same CLI without npm's own
  // start-up, which cost a second or two of CPU per call.
  return compiled
    ? options.npx
      ? run('npx', ['typeorm', command, '-d', CLI_DATA_SOURCE], env)
      : run(process.execPath, ['node_modules/typeorm/cli.js', command, '-d', CLI_DATA_SOURCE], env)
    : run(
        process.execPath,
        [
          '-r',
          'ts-node/register/transpile-only',
          '-r',
          'tsconfig-paths/register',
          'node_modules/typeorm/cli.js',
          command,
          '-d',
          'migrations/data-source.ts',
        ],
        env,
      );
}

function run(file: string, argv: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 45_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const compiledAvailable = existsSync(join(ROOT, COMPILED));

describe('migrate.js on SQLite', () => {
  if (isCi() && !compiledAvailable) {
    it('is built (CI runs `npm run build` before the tests)', () => {
      throw new Error(`${COMPILED} is missing: run \`npm run build\` first`);
    });
    return;
  }
  const compiled = compiledAvailable;
  const dir = tempDir('leaf-migrate');
  afterAll(() => dir.remove());

  it(`applies, reports, reverts and refuses to drop allocated ranges (${compiled ? 'compiled, plain node' : 'ts-node'})`, async () => {
    const db = join(dir.path, 'nested', 'leaf.sqlite');
    const env = { NODE_ENV: 'production', LEAF_DB_URL: `sqlite:${db}` };

    const first = await migrate([], env, compiled);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toContain(
      `Applied ${LIBRARY}\nApplied ${GUARD}\nApplied ${CLASS}\nApplied ${ISSUER}\nApplied ${LEASE}\nApplied ${FORMATS}\nApplied ${JOURNAL}\nApplied ${GAPLESS}\nApplied ${SEED}\nApplied 9 migration(s)`,
    );
    expect((await migrate(['run'], env, compiled)).stdout).toContain(
      'up to date: nothing to apply',
    );
    expect((await migrate(['status'], env, compiled)).stdout).toContain(
      `[X] ${LIBRARY}\n[X] ${GUARD}\n[X] ${CLASS}\n[X] ${ISSUER}\n[X] ${LEASE}\n[X] ${FORMATS}\n[X] ${JOURNAL}\n[X] ${GAPLESS}\n[X] ${SEED}\n0 pending`,
    );

    // The seed goes first (its demo tag untouched, it removes it); then the empty table.
    const reverted = await migrate(['revert'], env, compiled);
    expect(reverted).toMatchObject({ code: 0 });
    expect(reverted.stdout).toContain(`Reverted ${SEED}`);
    await revertInProcess(env, [GAPLESS, JOURNAL, FORMATS, LEASE, ISSUER, CLASS, GUARD]);
    expect((await migrate(['revert'], env, compiled)).stdout).toContain(`Reverted ${LIBRARY}`);
    expect((await migrate(['status'], env, compiled)).stdout).toContain(
      `[ ] ${LIBRARY}\n[ ] ${GUARD}\n[ ] ${CLASS}\n[ ] ${ISSUER}\n[ ] ${LEASE}\n[ ] ${FORMATS}\n[ ] ${JOURNAL}\n[ ] ${GAPLESS}\n[ ] ${SEED}\n9 pending`,
    );
    expect((await migrate(['revert'], env, compiled)).stdout).toContain('Nothing to revert');

    // Allocated ranges may not: re-creating the table would re-issue their IDs.
    expect((await migrate(['run'], env, compiled)).code).toBe(0);
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the driver, only for these statements
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    const sqlite = new Database(db);
    sqlite.prepare("UPDATE leaf_alloc SET max_id = 2001 WHERE biz_tag = 'leaf-segment-test'").run();
    sqlite.close();
    // The seed's revert keeps a demo tag that has handed out IDs; the table's refuses.
    expect((await migrate(['revert'], env, compiled)).stdout).toContain(`Reverted ${SEED}`);
    await revertInProcess(env, [GAPLESS, JOURNAL, FORMATS, LEASE, ISSUER, CLASS, GUARD]);
    const refused = await migrate(['revert'], env, compiled);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Leaf migration failed: Refusing to drop leaf_alloc');
    expect((await migrate(['status'], env, compiled)).stdout).toContain(
      `[X] ${LIBRARY}\n[ ] ${GUARD}\n[ ] ${CLASS}\n[ ] ${ISSUER}\n[ ] ${LEASE}\n[ ] ${FORMATS}\n[ ] ${JOURNAL}\n[ ] ${GAPLESS}\n[ ] ${SEED}\n8 pending`,
    );
    const check = new Database(db, { readonly: true });
    expect(check.prepare('SELECT biz_tag, max_id FROM leaf_alloc').all()).toEqual([
      { biz_tag: 'leaf-segment-test', max_id: 2001 },
    ]);
    check.close();
  });

  it('needs LEAF_DB_URL with NODE_ENV=production, and nothing else', async () => {
    const missing = await migrateInProcess('run', { NODE_ENV: 'production' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Leaf migration failed: [LEAF_CONFIGURATION]');
    expect(missing.stderr).toContain('LEAF_DB_URL');
    // The service's other variables do not concern it, even when they would stop the service.
    const db = `sqlite:${join(dir.path, 'other.sqlite')}`;
    const ok = await migrateInProcess('run', {
      NODE_ENV: 'production',
      LEAF_DB_URL: db,
      LEAF_WORKER_ID: 'x',
    });
    expect(ok.code).toBe(0);
  });

  it('rejects an unknown command with exit code 2 and the usage', async () => {
    const bad = await migrate(['up'], { LEAF_DB_URL: 'sqlite::memory:' }, compiled);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown command "up"');
    expect(bad.stderr).toContain('Usage: node dist/src/database/migrate.js');
  });
});

/**
 * Starts the built application as a deployer does with `url` as its only database setting
 * (the service account's, no migrations) and expects it ready and serving the demo tag.
 */
async function expectServesAs(url: string, stateDir: string): Promise<void> {
  const app = AppProcess.spawn(
    {
      NODE_ENV: 'production',
      PORT: '0',
      LEAF_DB_URL: url,
      LEAF_DB_MIGRATE: 'false',
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_STATE_DIR: stateDir,
    },
    { timeoutMs: 45_000 },
  );
  const port = await app.listening();
  const client = new HttpClient(`http://127.0.0.1:${port}`);
  try {
    expect((await client.send('/health/ready')).status).toBe(200);
    expect(await client.send('/api/segment/get/leaf-segment-test')).toMatchObject({
      status: 200,
      body: '1',
    });
  } finally {
    client.close();
    await app.stop();
  }
}

/**
 * The SQL of a deploy/compose script's `<<SQL … SQL` here-document (`postgres/…` for the
 * PostgreSQL variant's), its `${NAME:?}` expanded.
 */
function composeSql(script: string, vars: Record<string, string>): string[] {
  const text = readFileSync(join(ROOT, 'deploy', 'compose', script), 'utf8');
  const body = /<<SQL\n([\s\S]*?)\nSQL\n/.exec(text)?.[1];
  expect(body).toBeDefined();
  const sql = body!.replace(/\\`/g, '`').replace(/\$\{([A-Z_]+)(?::\?)?\}/g, (_, name: string) => {
    expect(vars[name]).toBeDefined();
    return vars[name];
  });
  expect(sql).not.toMatch(/[$\\]/);
  return sql
    .split(';')
    .map((statement) => statement.trim())
    .filter((statement) => statement !== '');
}

describeWithServices(['mysql'], 'migrate.js on MariaDB with the compose accounts', () => {
  const run = randomBytes(5).toString('hex');
  const vars = {
    MARIADB_DATABASE: `leaf_migrate_test_${run}`,
    LEAF_MIGRATOR_USER: `leaf_mig_${run}`,
    LEAF_MIGRATOR_PASSWORD: `m-${randomBytes(8).toString('hex')}`,
    LEAF_APP_USER: `leaf_app_${run}`,
    LEAF_APP_PASSWORD: `a-${randomBytes(8).toString('hex')}`,
  };
  const server = new URL(MYSQL_SERVER_URL);
  const urlAs = (user: string, password: string): string =>
    `mysql://${user}:${password}@${server.host}/${vars.MARIADB_DATABASE}`;
  const migratorUrl = urlAs(vars.LEAF_MIGRATOR_USER, vars.LEAF_MIGRATOR_PASSWORD);
  const appUrl = urlAs(vars.LEAF_APP_USER, vars.LEAF_APP_PASSWORD);
  const asRoot = async (statements: string[]): Promise<void> => {
    const connection = await createConnection(MYSQL_SERVER_URL);
    try {
      for (const statement of statements) await connection.query(statement);
    } finally {
      await connection.end();
    }
  };
  const asApp = async (sql: string): Promise<unknown> => {
    const connection = await createConnection(appUrl);
    try {
      return (await connection.query(sql))[0];
    } finally {
      await connection.end();
    }
  };
  const state = tempDir('leaf-migrate-state');

  beforeAll(async () => {
    await asRoot([`CREATE DATABASE \`${vars.MARIADB_DATABASE}\` CHARACTER SET utf8mb4`]);
    await asRoot(composeSql('10-leaf-users.sh', vars));
  });
  afterAll(async () => {
    await killAllAppProcesses();
    state.remove();
    await asRoot([
      `DROP USER IF EXISTS '${vars.LEAF_MIGRATOR_USER}'@'%'`,
      `DROP USER IF EXISTS '${vars.LEAF_APP_USER}'@'%'`,
      `DROP DATABASE IF EXISTS \`${vars.MARIADB_DATABASE}\``,
    ]);
  });

  it('migrates with the migration account; reverts an untouched table; migrates again', async () => {
    const env = { NODE_ENV: 'production', LEAF_DB_URL: migratorUrl };
    const applied = await migrateInProcess('run', env);
    expect(applied).toMatchObject({ code: 0, stderr: '' });
    expect(applied.stdout).toContain(
      `Applied ${LIBRARY}\nApplied ${GUARD}\nApplied ${CLASS}\nApplied ${ISSUER}\nApplied ${LEASE}\nApplied ${FORMATS}\nApplied ${JOURNAL}\nApplied ${GAPLESS}\nApplied ${SEED}`,
    );
    expect((await migrateInProcess('run', env)).stdout).toContain('up to date');
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${SEED}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${GAPLESS}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${JOURNAL}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${FORMATS}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${LEASE}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${ISSUER}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${CLASS}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${GUARD}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${LIBRARY}`);
    expect((await migrateInProcess('status', env)).stdout).toContain('9 pending');
    expect((await migrateInProcess('run', env)).code).toBe(0);
  });

  it('leaves the service account without access until grant-app.sh, then with SELECT, UPDATE only', async () => {
    await expect(asApp('SELECT COUNT(*) FROM leaf_alloc')).rejects.toThrow(/denied/);
    await asRoot(composeSql('grant-app.sh', vars));
    expect(
      await asApp("SELECT biz_tag FROM leaf_alloc WHERE biz_tag = 'leaf-segment-test'"),
    ).toHaveLength(1);
    await asApp("UPDATE leaf_alloc SET description = 'x' WHERE biz_tag = 'nope'");
    await expect(asApp("INSERT INTO leaf_alloc (biz_tag, step) VALUES ('t', 1)")).rejects.toThrow(
      /denied/,
    );
    await expect(asApp('DELETE FROM leaf_alloc')).rejects.toThrow(/denied/);
    await expect(asApp('DROP TABLE leaf_alloc')).rejects.toThrow(/denied/);
    await expect(asApp('SELECT * FROM leaf_migrations')).rejects.toThrow(/denied/);
  });

  it('is enough for the application: it serves segment IDs as the service account', () =>
    expectServesAs(appUrl, state.path));

  it('refuses to revert once ranges were allocated (exit code 1, the table stays)', async () => {
    const env = { NODE_ENV: 'production', LEAF_DB_URL: migratorUrl };
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${SEED}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${GAPLESS}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${JOURNAL}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${FORMATS}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${LEASE}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${ISSUER}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${CLASS}`);
    expect((await migrateInProcess('revert', env)).stdout).toContain(`Reverted ${GUARD}`);
    const refused = await migrateInProcess('revert', env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Refusing to drop leaf_alloc');
    const rows = (await asApp(
      "SELECT CAST(max_id AS CHAR) AS max_id FROM leaf_alloc WHERE biz_tag = 'leaf-segment-test'",
    )) as Array<{ max_id: string }>;
    expect(BigInt(rows[0].max_id)).toBeGreaterThan(1n); // the range the application took
  });
});

describeWithServices(['postgres'], 'migrate.js on PostgreSQL with the compose accounts', () => {
  const run = randomBytes(5).toString('hex');
  const vars = {
    POSTGRES_DB: `leaf_migrate_test_${run}`,
    POSTGRES_USER: 'postgres',
    LEAF_MIGRATOR_USER: `leaf_mig_${run}`,
    LEAF_MIGRATOR_PASSWORD: `m-${randomBytes(8).toString('hex')}`,
    LEAF_APP_USER: `leaf_app_${run}`,
    LEAF_APP_PASSWORD: `a-${randomBytes(8).toString('hex')}`,
  };
  const server = new URL(POSTGRES_TEST_URL);
  const urlOf = (user: string, password: string, database = vars.POSTGRES_DB): string =>
    `postgres://${user}:${password}@${server.host}/${database}`;
  const migratorUrl = urlOf(vars.LEAF_MIGRATOR_USER, vars.LEAF_MIGRATOR_PASSWORD);
  const appUrl = urlOf(vars.LEAF_APP_USER, vars.LEAF_APP_PASSWORD);
  const on = async (url: string, statements: string[]): Promise<unknown[]> => {
    const client = new PgClient({ connectionString: url });
    await client.connect();
    try {
      const rows: unknown[] = [];
      for (const statement of statements) rows.push(...(await client.query(statement)).rows);
      return rows;
    } finally {
      await client.end();
    }
  };
  // The scripts run as the image's superuser, in the Leaf database.
  const asAdmin = (statements: string[]) => {
    const admin = new URL(POSTGRES_TEST_URL);
    admin.pathname = `/${vars.POSTGRES_DB}`;
    return on(admin.toString(), statements);
  };
  const state = tempDir('leaf-migrate-pg-state');

  beforeAll(async () => {
    await on(POSTGRES_TEST_URL, [`CREATE DATABASE ${vars.POSTGRES_DB}`]);
    await asAdmin(composeSql('postgres/10-leaf-users.sh', vars));
  });
  afterAll(async () => {
    await killAllAppProcesses();
    state.remove();
    await on(POSTGRES_TEST_URL, [
      `DROP DATABASE IF EXISTS ${vars.POSTGRES_DB} WITH (FORCE)`,
      `DROP ROLE IF EXISTS ${vars.LEAF_MIGRATOR_USER}`,
      `DROP ROLE IF EXISTS ${vars.LEAF_APP_USER}`,
    ]);
  });

  it('migrates with the migration account; the service account gets SELECT, INSERT, UPDATE from grant-app.sh only, and serves IDs', async () => {
    const applied = await migrateInProcess('run', {
      NODE_ENV: 'production',
      LEAF_DB_URL: migratorUrl,
    });
    expect(applied).toMatchObject({ code: 0, stderr: '' });
    expect(applied.stdout).toContain(`Applied ${LIBRARY}\nApplied ${GUARD}`);
    const asApp = (sql: string) => on(appUrl, [sql]);
    await expect(asApp('SELECT COUNT(*) FROM leaf_alloc')).rejects.toThrow(/permission denied/);
    await asAdmin(composeSql('postgres/grant-app.sh', vars));
    expect(
      await asApp("SELECT biz_tag FROM leaf_alloc WHERE biz_tag = 'leaf-segment-test'"),
    ).toHaveLength(1);
    await expect(asApp('DELETE FROM leaf_alloc')).rejects.toThrow(/permission denied/);
    await expect(asApp('DROP TABLE leaf_alloc')).rejects.toThrow(/must be owner/);
    await expect(asApp('SELECT * FROM leaf_migrations')).rejects.toThrow(/permission denied/);

    await expectServesAs(appUrl, state.path);
  });
});

describeWithServices(
  ['mysql'],
  'the TypeORM CLI on migrations/data-source with NODE_ENV=production',
  () => {
    if (isCi() && !existsSync(join(ROOT, CLI_DATA_SOURCE))) {
      it('is built (CI runs `npm run build` before the tests)', () => {
        throw new Error(`${CLI_DATA_SOURCE} is missing: run \`npm run build\` first`);
      });
      return;
    }
    const compiled = existsSync(join(ROOT, CLI_DATA_SOURCE));
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(() => db?.drop());

    /** The database settings and nothing else: no ZooKeeper, no worker identity. */
    const production = () => ({ NODE_ENV: 'production', LEAF_DB_URL: db.url });

    it(`shows, runs and reverts the application's migrations (${compiled ? CLI_DATA_SOURCE : 'ts-node'})`, async () => {
      const pending = await typeormCli('migration:show', production(), compiled, { npx: true });
      expect(pending).toMatchObject({ code: 0 });
      expect(pending.stdout).toContain(
        `[ ] ${LIBRARY}\n[ ] ${GUARD}\n[ ] ${CLASS}\n[ ] ${ISSUER}\n[ ] ${LEASE}\n[ ] ${FORMATS}\n[ ] ${JOURNAL}\n[ ] ${GAPLESS}\n[ ] ${SEED}`,
      );

      const applied = await typeormCli('migration:run', production(), compiled);
      expect(applied).toMatchObject({ code: 0 });
      expect(applied.stdout).toContain(`Migration ${LIBRARY} has been executed successfully.`);
      expect(applied.stdout).toContain(`Migration ${GUARD} has been executed successfully.`);
      expect(applied.stdout).toContain(`Migration ${CLASS} has been executed successfully.`);
      expect(applied.stdout).toContain(`Migration ${ISSUER} has been executed successfully.`);
      expect(applied.stdout).toContain(`Migration ${LEASE} has been executed successfully.`);
      expect(applied.stdout).toContain(`Migration ${FORMATS} has been executed successfully.`);
      expect(applied.stdout).toContain(`Migration ${JOURNAL} has been executed successfully.`);
      expect(applied.stdout).toContain(`Migration ${GAPLESS} has been executed successfully.`);
      expect(applied.stdout).toContain(`Migration ${SEED} has been executed successfully.`);
      expect(await db.query('SELECT name FROM leaf_migrations ORDER BY id')).toEqual([
        { name: LIBRARY },
        { name: GUARD },
        { name: CLASS },
        { name: ISSUER },
        { name: LEASE },
        { name: FORMATS },
        { name: JOURNAL },
        { name: GAPLESS },
        { name: SEED },
      ]);
      expect(await db.maxId('leaf-segment-test')).toBe('1');

      const shown = await typeormCli('migration:show', production(), compiled);
      expect(shown).toMatchObject({ code: 0 });
      expect(shown.stdout).toContain(
        `[X] 1 ${LIBRARY}\n[X] 2 ${GUARD}\n[X] 3 ${CLASS}\n[X] 4 ${ISSUER}\n[X] 5 ${LEASE}\n[X] 6 ${FORMATS}\n[X] 7 ${JOURNAL}\n[X] 8 ${GAPLESS}\n[X] 9 ${SEED}`,
      );

      const reverted = await typeormCli('migration:revert', production(), compiled);
      expect(reverted).toMatchObject({ code: 0 });
      expect(reverted.stdout).toContain(`Migration ${SEED} has been reverted successfully.`);
      expect(await db.maxId('leaf-segment-test')).toBeNull();
      expect((await typeormCli('migration:run', production(), compiled)).code).toBe(0);
      expect(await db.maxId('leaf-segment-test')).toBe('1');
    });

    it('ignores the service’s other variables, and refuses the embedded SQLite default', async () => {
      // What stopped the CLI before: a service configuration it does not need (no worker-ID
      // source in production; here even invalid worker settings).
      const shown = await typeormCli(
        'migration:show',
        { ...production(), LEAF_WORKER_ID: 'x', LEAF_WORKER_ID_FROM_HOSTNAME: 'maybe' },
        compiled,
      );
      expect(shown).toMatchObject({ code: 0 });
      expect(shown.stdout).toContain(`[X] 1 ${LIBRARY}`);

      const refused = await typeormCli('migration:show', { NODE_ENV: 'production' }, compiled);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('Invalid Leaf configuration');
      expect(refused.stderr).toContain('NODE_ENV=production');
      expect(refused.stderr).toContain('LEAF_DB_URL is not set');
    });
  },
);

describeWithServices(
  ['mysql', 'postgres'],
  'migrate.js with LEAF_SEGMENT_HIGH_WATER_DB_URL (the marks in a database of their own)',
  () => {
    let allocation: PostgresTestDatabase;
    let marks: TestDatabase;
    beforeAll(async () => {
      allocation = await createPostgresTestDatabase();
      marks = await createTestDatabase();
    });
    afterAll(async () => {
      await allocation?.drop();
      await marks?.drop();
    });

    it('gives the marks database leaf_high_water only, with the same command; refuses it on the allocation database', async () => {
      const env = {
        NODE_ENV: 'production',
        LEAF_DB_URL: allocation.url,
        LEAF_SEGMENT_HIGH_WATER_DB_URL: marks.url,
      };
      const applied = await migrateInProcess('run', env);
      expect(applied).toMatchObject({ code: 0 });
      expect(applied.stdout).toContain(`Applied ${LIBRARY}`);
      expect(applied.stdout).toContain(`Applied 1 migration(s) to MySQL (high-water marks)`);
      expect(await marks.query('SELECT name FROM leaf_migrations')).toEqual([
        { name: 'CreateLeafHighWater1700000000100' },
      ]);
      expect(await marks.query("SHOW TABLES LIKE 'leaf_alloc'")).toEqual([]);
      expect(await allocation.query("SELECT to_regclass('leaf_high_water') AS t")).toEqual([
        { t: null },
      ]);
      const status = await migrateInProcess('status', env);
      expect(status.stdout).toContain(
        '[X] CreateLeafHighWater1700000000100\n0 pending migration(s) on MySQL (high-water marks)',
      );
      const refused = await migrateInProcess('run', {
        ...env,
        LEAF_SEGMENT_HIGH_WATER_DB_URL: allocation.url,
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /LEAF_SEGMENT_HIGH_WATER_DB_URL names the allocation database of LEAF_DB_URL/,
      );
    });
  },
);
