/**
 * The consumer test of one Nest major on one Node major, from libs/leaf/README.md's own words
 * (test/support/readme-setup.ts reads them):
 *
 * 1. `npx @nestjs/cli@<nest> new` scaffolds the app (the CLI from the registry);
 * 2. the README's install commands run as written, the packed tarball in place of the
 *    package name (no --force, no --legacy-peer-deps; npm prefers its cache);
 * 3. the README's setup files replace the scaffold's (its other path-named files and its
 *    Prisma schema are added); its build steps (`npx prisma generate`); `npm run build`;
 * 4. Express: one process on SQLite, one on a private MariaDB database, both with worker IDs
 *    from ZooKeeper (a private namespace); the README's SQL adds the tag;
 * 5. Fastify: the README's Fastify install command and main.ts, rebuilt, on MariaDB.
 *
 * Each proves segment IDs, snowflake IDs, the health indicators and a Leaf error's status
 * and JSON body. Wall times per step are printed at the end.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from 'nestjs-leaf';
import {
  RunningApp,
  StepTimes,
  childEnv,
  installedVersion,
  nodeRuntime,
  run,
  writeFiles,
  type NodeRuntime,
} from '../support/consumer-app';
import { ROOT, packLibrary, packedTempDir, removePackedDirs } from '../support/packed-library';
import { sparePort } from '../system/harness/mariadb-server';
import { readmeSetup, type ReadmeSetup } from '../support/readme-setup';
import { describeWithServices, zookeeperConnectString } from '../support/services';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { connectZookeeperAdmin, deleteTree } from '../support/zookeeper';

export interface ConsumerLine {
  /** Nest major: the CLI that scaffolds (`@nestjs/cli@<nest>`) and the README's block. */
  readonly nest: number;
  /** Node major the app is installed, built and run with. */
  readonly node: number;
  /** TypeORM major the README's commands must install with this Nest. */
  readonly typeorm: string;
}

const MINUTE = 60_000;
/** The error the README's last sentence names. */
const UNKNOWN_TAG = {
  status: 404,
  type: expect.stringMatching(/^application\/json/),
  body: {
    statusCode: 404,
    code: 'LEAF_TAG_NOT_FOUND',
    message: 'Tag "nope" does not exist in leaf_alloc',
    leafCode: -2,
  },
};

/** The oldest Node the CLI of Nest `major` runs on (its engines): 12's needs Node 22. */
function cliNodeMajor(nest: number, node: number): number {
  return nest >= 12 && node < 22 ? 24 : node;
}

export function consumerAppSuite(line: ConsumerLine): void {
  const title = `a Nest ${line.nest} app from \`npx @nestjs/cli@${line.nest} new\` on Node ${line.node}, set up as libs/leaf/README.md says`;
  describeWithServices(['mysql', 'zookeeper'], title, () => {
    const leafName = `consumer-app-${line.nest}-${randomBytes(4).toString('hex')}`;
    const times = new StepTimes();
    const timed = <T>(step: string, work: () => Promise<T>) => times.timed(step, work);
    let node: NodeRuntime;
    let setup: ReadmeSetup;
    let app: string;
    let work: string;
    let mysql: TestDatabase | undefined;
    const apps: Record<string, RunningApp | undefined> = {};
    let installCommands: string[][] = [];

    const start = async (which: string, env: Record<string, string>) => {
      const port = await sparePort();
      apps[which] = await RunningApp.start(app, {
        node,
        cwd: join(work, which),
        port,
        env: {
          ZOOKEEPER: zookeeperConnectString(),
          LEAF_NAME: leafName,
          ADVERTISE: `127.0.0.1:${port}`,
          ...env,
        },
      });
    };

    const build = () =>
      timed('npm run build', () =>
        run(['npm', 'run', 'build'], { cwd: app, env: childEnv(node), timeoutMs: 5 * MINUTE }),
      );

    beforeAll(async () => {
      const suiteStarted = Date.now();
      setup = readmeSetup(line.nest);
      node = nodeRuntime(line.node);
      const tarball = packLibrary();
      work = packedTempDir(`leaf-consumer-app-${line.nest}-`);
      mysql = await createTestDatabase();

      const cliNode = cliNodeMajor(line.nest, line.node) === line.node ? node : nodeRuntime(24);
      await timed(`npx @nestjs/cli@${line.nest} new (Node ${cliNode.version})`, () =>
        run(
          [
            'npx',
            '--yes',
            `@nestjs/cli@${line.nest}`,
            'new',
            'app',
            '--skip-git',
            '--skip-install',
            '--package-manager',
            'npm',
            ...(line.nest >= 12 ? ['--no-observe'] : []),
          ],
          { cwd: work, env: childEnv(cliNode), timeoutMs: 5 * MINUTE },
        ),
      );
      app = join(work, 'app');

      // The README names the package once; that word becomes the tarball.
      const mentions = setup.install.flat().filter((word) => word === 'nestjs-leaf').length;
      if (mentions !== 1) {
        throw new Error(
          `README: the install commands for Nest ${line.nest} name nestjs-leaf ${mentions} times (expected once)`,
        );
      }
      installCommands = setup.install.map((argv) =>
        argv.map((word) => (word === 'nestjs-leaf' ? tarball : word)),
      );
      for (const argv of installCommands) {
        await timed(argv.join(' ').replace(tarball, 'nestjs-leaf'), () =>
          run(argv, { cwd: app, env: childEnv(node), timeoutMs: 15 * MINUTE }),
        );
      }

      writeFiles(app, setup.files.express);
      // The README's build steps (`npx prisma generate`: the client its Prisma files import).
      for (const argv of setup.prepare) {
        await timed(argv.join(' '), () =>
          run(argv, { cwd: app, env: childEnv(node), timeoutMs: 5 * MINUTE }),
        );
      }
      await build();

      await timed('start (Express: SQLite, MariaDB)', () =>
        Promise.all([
          start('express-sqlite', { DATABASE_URL: 'sqlite:data/app.sqlite' }),
          start('express-mariadb', { DATABASE_URL: mysql!.url }),
        ]),
      );
      // The migrations made leaf_alloc empty; the README's SQL adds its tag.
      const sqlite = new Database(join(work, 'express-sqlite', 'data', 'app.sqlite'));
      try {
        for (const statement of setup.sql) sqlite.exec(statement);
      } finally {
        sqlite.close();
      }
      for (const statement of setup.sql) await mysql.query(statement);
      times.record('total before the first request', Date.now() - suiteStarted);
    }, 40 * MINUTE);

    afterAll(async () => {
      await Promise.all(Object.values(apps).map((running) => running?.stop()));
      await mysql?.drop();
      const admin = await connectZookeeperAdmin();
      try {
        await deleteTree(admin, `/snowflake/${leafName}`);
      } finally {
        await admin.close();
      }
      if (!process.env.LEAF_CONSUMER_KEEP) removePackedDirs();
      console.log(times.report(`Nest ${line.nest} on Node ${node?.version}`));
    }, 2 * MINUTE);

    it(`runs on Node ${line.node} (the package's engines allow it)`, () => {
      const engines = (
        JSON.parse(readFileSync(join(ROOT, 'libs', 'leaf', 'package.json'), 'utf8')) as {
          engines: { node: string };
        }
      ).engines.node;
      expect(node.version.split('.')[0]).toBe(String(line.node));
      // The range's lower bound for this major, e.g. ^20.19.0: the version is at or above it.
      const floor = new RegExp(`\\^${line.node}\\.(\\d+)\\.(\\d+)`).exec(engines);
      const [, minor, patch] = node.version.split('.').map(Number);
      if (floor)
        expect(minor * 1000 + patch).toBeGreaterThanOrEqual(
          Number(floor[1]) * 1000 + Number(floor[2]),
        );
      else expect(engines).toMatch(new RegExp(`>=\\s*${line.node}\\.`));
    });

    it(`installs Nest ${line.nest} and TypeORM ${line.typeorm} with the README's commands, the packed nestjs-leaf, no --force or --legacy-peer-deps`, () => {
      for (const argv of [...installCommands, ...setup.fastifyInstall]) {
        expect(argv.slice(0, 2)).toEqual(['npm', expect.stringMatching(/^(install|i|add)$/)]);
        expect(argv).not.toContain('--force');
        expect(argv).not.toContain('--legacy-peer-deps');
      }
      expect(installedVersion(app, '@nestjs/core')).toMatch(new RegExp(`^${line.nest}\\.`));
      expect(installedVersion(app, 'typeorm')).toMatch(
        new RegExp(`^${line.typeorm.replace('.', '\\.')}\\.`),
      );
      expect(installedVersion(app, 'nestjs-leaf')).toBe(
        (
          JSON.parse(readFileSync(join(ROOT, 'libs', 'leaf', 'package.json'), 'utf8')) as {
            version: string;
          }
        ).version,
      );
    });

    /** The proofs every running variant must pass. */
    const proofs = (
      which: () => RunningApp,
      mode: 'sqlite' | 'mariadb',
      platform: 'Express' | 'Fastify',
    ) => {
      it(`serves segment IDs of the README's tag from ${mode === 'sqlite' ? 'SQLite' : 'MariaDB'}`, async () => {
        const tag = /VALUES \('([^']+)'/.exec(setup.sql.join('\n'))![1];
        const first = await which().get(`/ids/segment/${tag}`);
        expect(first).toMatchObject({ status: 200, body: { id: expect.stringMatching(/^\d+$/) } });
        const second = await which().get(`/ids/segment/${tag}`);
        expect(BigInt((second.body as { id: string }).id)).toBe(
          BigInt((first.body as { id: string }).id) + 1n,
        );
      });

      it('serves snowflake IDs with a worker ID from ZooKeeper', async () => {
        const answer = await which().get('/ids/snowflake');
        expect(answer).toMatchObject({ status: 200, body: { id: expect.stringMatching(/^\d+$/) } });
        const decoded = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH).decode(
          (answer.body as { id: string }).id,
        );
        expect(Math.abs(decoded.timestamp - Date.now())).toBeLessThan(MINUTE);
        const health = (await which().get('/health')).body as {
          details: { snowflake: { workerId: number } };
        };
        expect(decoded.workerId).toBe(health.details.snowflake.workerId);
      });

      it('reports both modes up through the terminus indicators', async () => {
        expect(await which().get('/health')).toMatchObject({
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

      it('answers a Leaf error (unknown tag) with its own status and JSON body', async () => {
        const answer = await which().get('/ids/segment/nope');
        expect({ status: answer.status, type: answer.type, body: answer.body }).toEqual(
          UNKNOWN_TAG,
        );
        // Express announces itself; Fastify does not.
        expect(answer.poweredBy).toBe(platform === 'Express' ? 'Express' : null);
      });
    };

    describe('on Express (the scaffold), SQLite', () => {
      proofs(() => apps['express-sqlite']!, 'sqlite', 'Express');
    });

    describe('on Express (the scaffold), MariaDB', () => {
      proofs(() => apps['express-mariadb']!, 'mariadb', 'Express');

      it('the two instances hold different worker IDs in the private ZooKeeper namespace', async () => {
        const workerIds = await Promise.all(
          ['express-sqlite', 'express-mariadb'].map(
            async (which) =>
              (
                (await apps[which]!.get('/health')).body as {
                  details: { snowflake: { workerId: number } };
                }
              ).details.snowflake.workerId,
          ),
        );
        expect(new Set(workerIds).size).toBe(2);
      });
    });

    describe('on Fastify (the README’s install command and main.ts), MariaDB', () => {
      beforeAll(async () => {
        await Promise.all(
          ['express-sqlite', 'express-mariadb'].map((which) => apps[which]?.stop()),
        );
        expect(setup.fastifyInstall.length).toBeGreaterThan(0);
        for (const argv of setup.fastifyInstall) {
          await timed(argv.join(' '), () =>
            run(argv, { cwd: app, env: childEnv(node), timeoutMs: 10 * MINUTE }),
          );
        }
        writeFiles(app, setup.files.fastify);
        await build();
        await timed('start (Fastify: MariaDB)', () =>
          start('fastify-mariadb', { DATABASE_URL: mysql!.url }),
        );
      }, 20 * MINUTE);

      it(`installs @nestjs/platform-fastify ${line.nest}`, () => {
        expect(installedVersion(app, '@nestjs/platform-fastify')).toMatch(
          new RegExp(`^${line.nest}\\.`),
        );
      });

      proofs(() => apps['fastify-mariadb']!, 'mariadb', 'Fastify');
    });
  });
}
