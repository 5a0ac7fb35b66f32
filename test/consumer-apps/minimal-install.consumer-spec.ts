/**
 * Every peer of the package is optional: a project with only `@nestjs/*` (and what they need)
 * and the packed library imports the root, the client and the client's Nest module, and
 * runs `LeafModule` in snowflake mode with a worker ID of its own (its state file's lock,
 * `fs-native-extensions`, installed) — with no TypeORM, MySQL, PostgreSQL or ZooKeeper driver. Each entry names the peers it needs in its own
 * first comment (libs/leaf/src/*.ts).
 */
import { childEnv, nodeRuntime, run, writeFiles, type NodeRuntime } from '../support/consumer-app';
import { packedTempDir, packLibrary, removePackedDirs } from '../support/packed-library';

const MINUTE = 60_000;
const ABSENT = ['typeorm', 'mysql2', 'pg', 'zookeeper', 'better-sqlite3', '@prisma/client'];

const CHECK = `
require('reflect-metadata');
const absent = ${JSON.stringify(ABSENT)}.filter((name) => {
  try { require.resolve(name); return false; } catch { return true; }
});
const root = require('nestjs-leaf');
const client = require('nestjs-leaf/client');
const clientNest = require('nestjs-leaf/client/nest');
const loaded = Object.keys(require.cache).filter((file) =>
  ${JSON.stringify(ABSENT)}.some((name) => file.includes('/node_modules/' + name + '/')),
);
const { NestFactory } = require('@nestjs/core');
const { Module } = require('@nestjs/common');
const { ScheduleModule } = require('@nestjs/schedule');
class AppModule {}
Module({
  imports: [
    ScheduleModule.forRoot(),
    root.LeafModule.forRoot({ segment: false, snowflake: { workerId: 7 } }),
  ],
})(AppModule);
(async () => {
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
  const ids = await app.get(root.IdService).getIds('snowflake', 'any', 3);
  await app.close();
  console.log(JSON.stringify({
    absent,
    loaded,
    entries: [typeof root.LeafModule, typeof client.LeafClient, typeof clientNest.LeafClientModule],
    ids: ids.map(String),
  }));
})().catch((error) => { console.error(error); process.exit(1); });
`;

describe('a project with only @nestjs/* and the package installed', () => {
  let node: NodeRuntime;
  let report: { absent: string[]; loaded: string[]; entries: string[]; ids: string[] };

  beforeAll(async () => {
    node = nodeRuntime(24);
    const tarball = packLibrary();
    const dir = packedTempDir('leaf-minimal-install-');
    writeFiles(dir, {
      'package.json': JSON.stringify({ name: 'minimal', private: true, version: '1.0.0' }),
      'check.js': CHECK,
    });
    const env = childEnv(node);
    await run(
      [
        'npm',
        'install',
        '--no-audit',
        '--no-fund',
        '@nestjs/common@11',
        '@nestjs/core@11',
        '@nestjs/schedule@6',
        'reflect-metadata',
        'rxjs',
        // The snowflake state file's lock (snowflake mode in process needs it).
        'fs-native-extensions',
        tarball,
      ],
      { cwd: dir, env, timeoutMs: 10 * MINUTE },
    );
    const { output } = await run(['node', 'check.js'], { cwd: dir, env, timeoutMs: MINUTE });
    report = JSON.parse(output.trim().split('\n').pop()!) as typeof report;
  }, 15 * MINUTE);

  afterAll(() => {
    if (!process.env.LEAF_CONSUMER_KEEP) removePackedDirs();
  });

  it('has none of the optional drivers and ORMs installed', () => {
    expect(report.absent).toEqual(ABSENT);
  });

  it('imports the root, the client and the client module without loading any of them', () => {
    expect(report.entries).toEqual(['function', 'function', 'function']);
    expect(report.loaded).toEqual([]);
  });

  it('serves snowflake IDs from LeafModule with a worker ID of its own', () => {
    expect(report.ids).toHaveLength(3);
    const ids = report.ids.map(BigInt);
    expect(ids[0] < ids[1] && ids[1] < ids[2]).toBe(true);
  });
});
