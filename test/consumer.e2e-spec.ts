/**
 * nestjs-leaf as a product: the packed tarball, installed the way a user installs it, in
 * applications outside the library's source.
 *
 * - test/consumer/: a user's Nest 11 app (its own AppModule, TypeOrmModule DataSource,
 *   HealthModule, a controller on IdService), run as real processes on Express + SQLite and
 *   on Fastify + MariaDB, both with snowflake mode on ZooKeeper: the shipped migrations
 *   create an empty leaf_alloc through the user's DataSource (in the library's own migrations
 *   table, next to the user's `synchronize: true`), the user's own migration adds their
 *   first tag, IDs are served, the terminus indicators report,
 *   and Leaf errors answer their status and JSON body on both HTTP platforms.
 * - test/consumer/peerless/: the package with only the peers the main entry needs (no
 *   zookeeper, mysql2, better-sqlite3, @nestjs/terminus) still boots LeafModule.
 * - test/consumer/client-only/: `nestjs-leaf/client` (and `nestjs-leaf/formats`) with nothing else installed takes IDs
 *   from a real Leaf server and loads no module from outside the package; and the fixture app
 *   with LeafClientModule in place of LeafModule serves the same routes remotely.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, copyFileSync, mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SnowflakeLayout } from 'nestjs-leaf';
import {
  ROOT,
  installPacked,
  linkRootPackages,
  packLibrary,
  packedTempDir,
  removePackedDirs,
} from './support/packed-library';
import { AppProcess } from './support/app-process';
import { describeWithServices, zookeeperConnectString } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { connectZookeeperAdmin, deleteTree } from './support/zookeeper';

const FIXTURE = join(ROOT, 'test', 'consumer');

afterAll(() => removePackedDirs());

/** What a fixture app answers for an unknown tag, in-process and remote alike. */
const UNKNOWN_TAG_ANSWER = {
  status: 404,
  type: expect.stringMatching(/^application\/json/),
  body: {
    statusCode: 404,
    code: 'LEAF_TAG_NOT_FOUND',
    message: 'Tag "nope" does not exist in leaf_alloc',
    leafCode: -2,
  },
};

describe('nestjs-leaf without its optional peers', () => {
  it('boots LeafModule (in-memory segment store, embedded snowflake) and never loads them', () => {
    const dir = packedTempDir('leaf-peerless-');
    installPacked(packLibrary(), dir);
    // What the main entry needs (every peer is optional, for nestjs-leaf/client) and
    // fs-native-extensions for the snowflake state-file lock; nothing else.
    linkRootPackages(dir, [
      '@nestjs/common',
      '@nestjs/core',
      '@nestjs/schedule',
      'typeorm',
      'reflect-metadata',
      'rxjs',
      'fs-native-extensions',
    ]);
    copyFileSync(join(FIXTURE, 'peerless', 'check.js'), join(dir, 'check.js'));
    const run = spawnSync(process.execPath, ['check.js', join(dir, 'state')], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    expect(result).toEqual({
      segment: '1',
      workerId: 7,
      packageDir: join(dir, 'node_modules', 'nestjs-leaf'),
      loadedOptionalPeers: [],
      resolvableOptionalPeers: [],
      health: expect.stringContaining("Cannot find module '@nestjs/terminus'"),
      tracing: 'LeafConfigurationError',
      pipe: '42',
      swagger: 'LeafConfigurationError',
    });
  });
});

/** A running fixture process. */
interface Consumer {
  readonly child: ChildProcess;
  readonly base: string;
  output(): string;
}

function startConsumer(dir: string, env: Record<string, string>): Promise<Consumer> {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
    cwd: dir,
    env: { ...process.env, TS_NODE_PROJECT: join(dir, 'tsconfig.json'), NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`consumer did not start within 45 s:\n${output}`));
    }, 45_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /LISTENING (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, base: `http://127.0.0.1:${match[1]}`, output: () => output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`consumer exited with ${code} before listening:\n${output}`));
    });
  });
}

async function stopConsumer(consumer: Consumer | undefined): Promise<void> {
  if (!consumer || consumer.child.exitCode !== null) return;
  const exited = new Promise((resolve) => consumer.child.once('exit', resolve));
  consumer.child.kill('SIGTERM');
  const timer = setTimeout(() => consumer.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function get(consumer: Consumer, path: string) {
  const response = await fetch(`${consumer.base}${path}`);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, type: response.headers.get('content-type'), body };
}

describeWithServices(['mysql', 'zookeeper'], 'a user application on the packed nestjs-leaf', () => {
  const leafName = `consumer-${randomBytes(4).toString('hex')}`;
  let mysql: TestDatabase;
  let sqliteFile: string;
  let fixtureDir: string;
  const apps: Record<'express+sqlite' | 'fastify+mariadb', Consumer | undefined> = {
    'express+sqlite': undefined,
    'fastify+mariadb': undefined,
  };

  beforeAll(async () => {
    mysql = await createTestDatabase();
    const dir = packedTempDir('leaf-consumer-');
    fixtureDir = dir;
    cpSync(join(FIXTURE, 'src'), join(dir, 'src'), { recursive: true });
    copyFileSync(join(FIXTURE, 'tsconfig.json'), join(dir, 'tsconfig.json'));
    copyFileSync(join(FIXTURE, 'package.json'), join(dir, 'package.json'));
    installPacked(packLibrary(), dir);
    linkRootPackages(dir);
    mkdirSync(join(dir, 'data'));
    sqliteFile = join(dir, 'data', 'consumer.sqlite');
    const common = {
      CONSUMER_LEAF_NAME: leafName,
      CONSUMER_ZK: zookeeperConnectString(),
      CONSUMER_STATE_DIR: join(dir, 'data'),
    };
    const [express, fastify] = await Promise.allSettled([
      startConsumer(dir, {
        ...common,
        CONSUMER_PLATFORM: 'express',
        CONSUMER_DB_URL: `sqlite:${sqliteFile}`,
        CONSUMER_ADVERTISE: '127.0.0.1:1',
      }),
      startConsumer(dir, {
        ...common,
        CONSUMER_PLATFORM: 'fastify',
        CONSUMER_DB_URL: mysql.url,
        CONSUMER_ADVERTISE: '127.0.0.1:2',
      }),
    ]);
    if (express.status === 'fulfilled') apps['express+sqlite'] = express.value;
    if (fastify.status === 'fulfilled') apps['fastify+mariadb'] = fastify.value;
    for (const result of [express, fastify]) if (result.status === 'rejected') throw result.reason;
  }, 90_000);

  afterAll(async () => {
    await Promise.all(Object.values(apps).map(stopConsumer));
    await mysql?.drop();
    const admin = await connectZookeeperAdmin();
    try {
      await deleteTree(admin, `/snowflake/${leafName}`);
    } finally {
      await admin.close();
    }
  }, 30_000);

  it('resolves nestjs-leaf from the extracted tarball, not from the repository', () => {
    for (const consumer of Object.values(apps)) {
      expect(/NESTJS_LEAF (.*)/.exec(consumer!.output())?.[1]).toBe(
        join(fixtureDir, 'node_modules', 'nestjs-leaf', 'dist', 'index.js'),
      );
    }
  });

  describe.each(['express+sqlite', 'fastify+mariadb'] as const)('%s', (which) => {
    const app = () => apps[which]!;

    it('serves segment IDs through IdService injected in its own controller', async () => {
      const first = await get(app(), '/id/segment/leaf-segment-test');
      expect(first).toMatchObject({ status: 200, body: { id: expect.stringMatching(/^\d+$/) } });
      const batch = await get(app(), '/ids/segment/leaf-segment-test?count=3');
      expect(batch.status).toBe(200);
      const ids = (batch.body as { ids: string[] }).ids.map(BigInt);
      expect(ids).toHaveLength(3);
      expect(ids[0] > BigInt((first.body as { id: string }).id)).toBe(true);
      expect(ids[1] - ids[0]).toBe(1n);
    });

    it('serves snowflake IDs with a worker ID from ZooKeeper, and decodes one as JSON', async () => {
      const answer = await get(app(), '/id/snowflake/order');
      expect(answer.status).toBe(200);
      const id = (answer.body as { id: string }).id;
      const decoded = new SnowflakeLayout(1288834974657).decode(id);
      expect(Math.abs(decoded.timestamp - Date.now())).toBeLessThan(60_000);
      expect(await get(app(), `/decode/${id}`)).toMatchObject({
        status: 200,
        body: { id, workerId: decoded.workerId, sequence: decoded.sequence },
      });
    });

    it('reports both modes up through the terminus indicators in its own HealthModule', async () => {
      expect(await get(app(), '/health')).toMatchObject({
        status: 200,
        body: {
          status: 'ok',
          details: {
            segment: { status: 'up', tags: 1 },
            snowflake: { status: 'up', mode: 'zookeeper', zookeeper: true },
          },
        },
      });
    });

    it('answers Leaf errors with their status and {statusCode, code, message}', async () => {
      expect(await get(app(), '/id/segment/nope')).toEqual(UNKNOWN_TAG_ANSWER);
      for (const count of ['0', 'abc', '100000']) {
        expect(await get(app(), `/ids/segment/leaf-segment-test?count=${count}`)).toMatchObject({
          status: 400,
          type: expect.stringMatching(/^application\/json/),
          body: { statusCode: 400, code: 'LEAF_INVALID_ARGUMENT', message: expect.any(String) },
        });
      }
    });
  });

  it('SQLite: the shipped migrations made leaf_alloc, recorded in leaf_migrations; synchronize left it alone', () => {
    const db = new Database(sqliteFile, { readonly: true });
    try {
      const tables = (
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{
          name: string;
        }>
      ).map((row) => row.name);
      expect(tables).toEqual(
        expect.arrayContaining(['leaf_alloc', 'leaf_migrations', 'consumer_note']),
      );
      expect(tables).not.toContain('migrations');
      expect(db.prepare('SELECT name FROM leaf_migrations').all()).toEqual([
        { name: 'CreateLeafAlloc1700000000000' },
        { name: 'GuardLeafAllocMaxId1700000000001' },
        { name: 'AddLeafAllocResidueClass1700000000002' },
        { name: 'CreateLeafSequenceIssuer1700000000003' },
        { name: 'CreateLeafWorkerLease1700000000004' },
        { name: 'CreateLeafNumberFormat1700000000005' },
        { name: 'CreateLeafIdJournal1700000000006' },
        { name: 'CreateLeafGapless1700000000007' },
        { name: 'SeedDemoTag1796304233816' },
      ]);
      const columns = db.prepare('PRAGMA table_info(leaf_alloc)').all() as Array<{
        name: string;
        type: string;
      }>;
      // The entity declares update_time as datetime: synchronize would have rebuilt it.
      expect(columns.find((column) => column.name === 'update_time')?.type).toBe('timestamp');
    } finally {
      db.close();
    }
  });

  it('MariaDB: the shipped migrations made leaf_alloc, recorded in leaf_migrations; synchronize left it alone', async () => {
    const tables = (
      await mysql.query<{ name: string }>(
        'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()',
      )
    ).map((row) => row.name);
    expect(tables).toEqual(
      expect.arrayContaining(['leaf_alloc', 'leaf_migrations', 'consumer_note']),
    );
    expect(tables).not.toContain('migrations');
    expect(await mysql.query('SELECT name FROM leaf_migrations')).toEqual([
      { name: 'CreateLeafAlloc1700000000000' },
      { name: 'GuardLeafAllocMaxId1700000000001' },
      { name: 'AddLeafAllocResidueClass1700000000002' },
      { name: 'CreateLeafSequenceIssuer1700000000003' },
      { name: 'CreateLeafWorkerLease1700000000004' },
      { name: 'CreateLeafNumberFormat1700000000005' },
      { name: 'CreateLeafIdJournal1700000000006' },
      { name: 'CreateLeafGapless1700000000007' },
      { name: 'SeedDemoTag1796304233816' },
    ]);
    const [updateTime] = await mysql.query<{ type: string; extra: string }>(
      "SELECT data_type AS type, extra FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'leaf_alloc' AND column_name = 'update_time'",
    );
    expect(updateTime.type).toBe('timestamp');
    expect(updateTime.extra.toLowerCase()).toContain('on update current_timestamp');
  });
});

describeWithServices(['mysql'], 'the remote client on the packed nestjs-leaf', () => {
  let db: TestDatabase;
  let server: AppProcess;
  let serverUrl: string;
  let state: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    state = packedTempDir('leaf-remote-state-');
    server = AppProcess.spawn(
      {
        PORT: '0',
        HOST: '127.0.0.1',
        LEAF_DB_URL: db.url,
        LEAF_DB_MIGRATE: 'true',
        LEAF_WORKER_ID: '3',
        LEAF_STATE_DIR: state,
        LEAF_ACCESS_LOG: 'false',
      },
      { timeoutMs: 120_000 },
    );
    serverUrl = `http://127.0.0.1:${await server.listening()}`;
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  }, 30_000);

  it('nestjs-leaf/client and nestjs-leaf/formats alone (no @nestjs, TypeORM, driver or ZooKeeper installed) take IDs from a real server and load nothing outside the package', () => {
    const dir = packedTempDir('leaf-client-only-');
    installPacked(packLibrary(), dir);
    copyFileSync(join(FIXTURE, 'client-only', 'check.js'), join(dir, 'check.js'));
    const run = spawnSync(process.execPath, ['check.js', serverUrl], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
      segment: string[];
      snowflake: string[];
    } & Record<string, unknown>;
    const segment = result.segment.map(BigInt);
    expect(segment).toEqual([0n, 1n, 2n, 3n, 4n].map((i) => segment[0] + i));
    expect(new SnowflakeLayout(1288834974657).decode(result.snowflake[0]).workerId).toBe(3);
    expect(result).toMatchObject({
      unknown: 'true LEAF_TAG_NOT_FOUND',
      rangeRequests: expect.any(Number),
      foreign: [],
      nest: expect.stringContaining("Cannot find module '@nestjs/common'"),
      formats: expect.stringMatching(/^[0-9A-Za-z]{11}$/),
    });
  });

  describe('the fixture app with LeafClientModule in place of LeafModule (one import changed)', () => {
    let remote: Consumer | undefined;

    beforeAll(async () => {
      const dir = packedTempDir('leaf-remote-consumer-');
      cpSync(join(FIXTURE, 'src'), join(dir, 'src'), { recursive: true });
      copyFileSync(join(FIXTURE, 'tsconfig.json'), join(dir, 'tsconfig.json'));
      copyFileSync(join(FIXTURE, 'package.json'), join(dir, 'package.json'));
      installPacked(packLibrary(), dir);
      linkRootPackages(dir);
      remote = await startConsumer(dir, {
        CONSUMER_PLATFORM: 'fastify',
        CONSUMER_LEAF_SERVERS: serverUrl,
      });
    }, 60_000);

    afterAll(() => stopConsumer(remote), 30_000);

    it('serves segment and snowflake IDs through the same IdService controller, loading no TypeORM, driver or ZooKeeper', async () => {
      expect(/DRIVERS_LOADED (\d+)/.exec(remote!.output())?.[1]).toBe('0');
      const first = await get(remote!, '/id/segment/leaf-segment-test');
      expect(first).toMatchObject({ status: 200, body: { id: expect.stringMatching(/^\d+$/) } });
      const batch = await get(remote!, '/ids/segment/leaf-segment-test?count=3');
      const ids = (batch.body as { ids: string[] }).ids.map(BigInt);
      expect(ids[0]).toBe(BigInt((first.body as { id: string }).id) + 1n);
      expect(ids[2] - ids[0]).toBe(2n);
      const snowflake = await get(remote!, '/id/snowflake/order');
      const id = (snowflake.body as { id: string }).id;
      expect(new SnowflakeLayout(1288834974657).decode(id).workerId).toBe(3);
    });

    it("answers the server's Leaf errors with the same status and body as in-process Leaf", async () => {
      expect(await get(remote!, '/id/segment/nope')).toEqual(UNKNOWN_TAG_ANSWER);
    });
  });
});
