/**
 * The `leaf` CLI against the test MariaDB and ZooKeeper, and its `tags` commands against
 * PostgreSQL: exit codes, messages, --json output; a tag created by the CLI is served at
 * once by a running app.
 *
 * Most cases call `runCli` (src/cli.ts) in this process with an explicit environment and
 * collect its lines as stdout/stderr; one case runs the CLI as operators do, a child process
 * (dist/src/cli.js when the build is fresh, else src/cli.ts through ts-node), for the exit
 * codes and streams of the real process and that it ends once a command is done. `decode` and
 * `bounds` need no database: they run once, in the MariaDB block.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SnowflakeLayout, DEFAULT_SNOWFLAKE_EPOCH } from 'nestjs-leaf';
import { JS_SAFE_EPOCH, SNOWFLAKE_LAYOUTS } from 'nestjs-leaf/server';
import { JS_SAFE_LAYOUT } from '@app/leaf/core/snowflake/snowflake-layout';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import { runCli } from '../src/cli';
import { inject, startApp, tempDir } from './support/app';
import { runScript, type ScriptResult } from './support/app-process';
import { SERVER_FLAVOURS, type ServerTestDatabase } from './support/server-databases';
import { describeWithServices, zookeeperConnectString } from './support/services';
import { connectZookeeperAdmin, deleteTree } from './support/zookeeper';

// The child-process block starts several ts-node processes at once.
jest.setTimeout(60_000);

/**
 * Runs `leaf <args>` in this process with exactly `env` (never the runner's variables);
 * stdout and stderr are its lines, each ended by a newline, as the process writes them.
 */
async function cli(args: string[], env: Record<string, string>): Promise<ScriptResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    env,
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
  });
  return { code, stdout, stderr };
}

/** Runs the CLI process with `args` and exactly `env` (plus PATH/HOME), never the runner's LEAF_*. */
function spawnCli(args: string[], env: Record<string, string>): Promise<ScriptResult> {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(LEAF_|PORT$|HOST$|NODE_ENV$)/.test(name)) base[name] = value;
  }
  return runScript('src/cli.ts', args, {
    env: { ...base, ...env },
    timeoutMs: 45_000,
    preferBuild: true,
  });
}

for (const flavour of SERVER_FLAVOURS) {
  const mysql = flavour.service === 'mysql';
  /** A database server URL nothing answers at. */
  const unreachable = mysql
    ? 'mysql://root@127.0.0.1:1/leaf'
    : 'postgres://postgres@127.0.0.1:1/leaf';
  // ZooKeeper for the workers command, run once (with MariaDB).
  describeWithServices(
    mysql ? ['mysql', 'zookeeper'] : ['postgres'],
    `leaf CLI against ${mysql ? 'MariaDB and ZooKeeper' : 'PostgreSQL'}`,
    () => {
      let db: ServerTestDatabase;
      let state: ReturnType<typeof tempDir>;
      let app: NestFastifyApplication;
      let env: Record<string, string>;

      beforeAll(async () => {
        db = await flavour.create();
        state = tempDir('leaf-cli');
        app = await startApp({
          LEAF_DB_URL: db.url,
          LEAF_DB_MIGRATE: 'true',
          LEAF_SNOWFLAKE_ENABLED: 'false',
          LEAF_STATE_DIR: state.path,
        });
        env = { LEAF_DB_URL: db.url };
      });

      afterAll(async () => {
        await app?.close();
        await db?.drop();
        state?.remove();
      });

      describe('tags', () => {
        it('creates a tag (exit 0, --json row) that a running app serves at once', async () => {
          const created = await cli(
            [
              'tags',
              'create',
              'cli-orders',
              '--step',
              '50',
              '--description',
              'from the CLI',
              '--json',
            ],
            env,
          );
          expect(created).toMatchObject({ code: 0, stderr: '' });
          expect(JSON.parse(created.stdout)).toEqual([
            {
              biz_tag: 'cli-orders',
              max_id: '1',
              step: 50,
              description: 'from the CLI',
              update_time: expect.any(String),
            },
          ]);
          expect((await inject(app, '/api/segment/get/cli-orders')).body).toBe('1');
        });

        it('lists and shows tags as a table and as JSON, max_id exact beyond 2^53', async () => {
          const big = ((1n << 60n) + 7n).toString();
          expect(
            (await cli(['tags', 'create', 'cli-big', '--step', '10', '--max-id', big], env)).code,
          ).toBe(0);
          const table = await cli(['tags', 'list'], env);
          expect(table.code).toBe(0);
          expect(table.stdout.split('\n')[0]).toMatch(
            /^biz_tag\s+max_id\s+step\s+description\s+update_time$/,
          );
          expect(table.stdout).toMatch(new RegExp(`cli-big\\s+${big}\\s+10`));
          const json = JSON.parse((await cli(['tags', 'list', '--json'], env)).stdout) as Array<{
            biz_tag: string;
            max_id: string;
          }>;
          expect(json.map((row) => row.biz_tag)).toEqual(
            expect.arrayContaining(['cli-big', 'cli-orders', 'leaf-segment-test']),
          );
          expect(json.find((row) => row.biz_tag === 'cli-big')?.max_id).toBe(big);
          const one = JSON.parse((await cli(['tags', 'show', 'cli-big', '--json'], env)).stdout);
          expect(one).toEqual([expect.objectContaining({ biz_tag: 'cli-big', max_id: big })]);
        });

        it('updates step and description, never max_id', async () => {
          await cli(['tags', 'create', 'cli-tuned', '--step', '10'], env);
          await inject(app, '/api/segment/get/cli-tuned');
          const before = await db.maxId('cli-tuned');
          const updated = await cli(
            ['tags', 'update', 'cli-tuned', '--step', '99', '--description', 'tuned', '--json'],
            env,
          );
          expect(updated.code).toBe(0);
          expect(JSON.parse(updated.stdout)).toEqual([
            expect.objectContaining({ max_id: before, step: 99, description: 'tuned' }),
          ]);
          expect(await db.maxId('cli-tuned')).toBe(before);
          const refused = await cli(['tags', 'update', 'cli-tuned', '--max-id', '1'], env);
          expect(refused.code).toBe(2);
          expect(refused.stderr).toMatch(/max_id cannot be changed/);
          expect(await db.maxId('cli-tuned')).toBe(before);
        });

        it('refuses with exit 1 and the error code: duplicate, unknown tag, invalid input', async () => {
          expect((await cli(['tags', 'create', 'cli-dup', '--step', '5'], env)).code).toBe(0);
          const duplicate = await cli(['tags', 'create', 'cli-dup', '--step', '7'], env);
          expect(duplicate.code).toBe(1);
          expect(duplicate.stderr).toMatch(
            /^leaf: \[LEAF_TAG_EXISTS\] Tag "cli-dup" already exists/,
          );
          const unknown = await cli(['tags', 'update', 'nope', '--step', '5'], env);
          expect(unknown.code).toBe(1);
          expect(unknown.stderr).toMatch(/\[LEAF_TAG_NOT_FOUND\]/);
          const missing = await cli(['tags', 'show', 'nope'], env);
          expect(missing.code).toBe(1);
          expect(missing.stderr).toMatch(/\[LEAF_TAG_NOT_FOUND\]/);
          for (const step of ['0', '-1', '2147483648']) {
            const bad = await cli(['tags', 'create', 'cli-bad', `--step=${step}`], env);
            expect(bad.code).toBe(1);
            expect(bad.stderr).toMatch(
              /\[LEAF_INVALID_ARGUMENT\] step must be an integer in 1\.\.2147483647/,
            );
          }
          expect(await db.maxId('cli-bad')).toBeNull();
        });

        it('usage errors exit 2 with the usage text; an unreachable database exits 3', async () => {
          for (const args of [
            [],
            ['frob'],
            ['tags'],
            ['tags', 'create', 'x'],
            ['tags', 'list', '--nope'],
          ]) {
            const result = await cli(args, env);
            expect(result.code).toBe(2);
            expect(result.stderr).toMatch(/Usage: leaf <command>/);
          }
          const help = await cli(['--help'], {});
          expect(help.code).toBe(0);
          expect(help.stdout).toMatch(/Usage: leaf <command>/);
          const down = await cli(['tags', 'list'], { LEAF_DB_URL: unreachable });
          expect(down.code).toBe(3);
          expect(down.stderr).toMatch(/^leaf: cannot open the database/);
        });
      });

      // The commands that need no database: once.
      if (!mysql) return;

      describe('decode', () => {
        it('splits an ID as the library does, as text and JSON', async () => {
          const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
          const id = layout.compose(1796212352749, 7, 51).toString();
          const json = await cli(['decode', id, '--json'], {});
          expect(json.code).toBe(0);
          expect(JSON.parse(json.stdout)).toEqual({
            id,
            timestamp: 1796212352749,
            isoDate: '2026-12-02T11:52:32.749Z',
            dataCenterId: 0,
            workerId: 7,
            sequence: 51,
          });
          // The JavaScript-safe layout with 2 data-centre bits (its own epoch).
          const jsSafe = new SnowflakeLayout(
            JS_SAFE_EPOCH,
            { ...JS_SAFE_LAYOUT, dataCenterBits: 2, workerBits: 5 },
            3,
          );
          const small = jsSafe.compose(1796212352749, 9, 5);
          expect(small).toBeLessThanOrEqual(BigInt(Number.MAX_SAFE_INTEGER));
          const split = await cli(
            [
              'decode',
              small.toString(),
              '--layout',
              'js-safe',
              '--data-center-bits',
              '2',
              '--json',
            ],
            {},
          );
          expect(JSON.parse(split.stdout)).toMatchObject({
            timestamp: 1796212352749,
            dataCenterId: 3,
            workerId: 9,
            sequence: 5,
          });
          const text = await cli(['decode', id], {});
          expect(text.stdout).toMatch(/workerId\s+7/);
          const bad = await cli(['decode', '-5'], {});
          expect(bad.code).not.toBe(0);
          const invalid = await cli(['decode', 'abc'], {});
          expect(invalid.code).toBe(1);
          expect(invalid.stderr).toMatch(/\[LEAF_INVALID_ARGUMENT\]/);
        });
      });

      describe('bounds', () => {
        const MARCH = Date.parse('2026-03-01T00:00:00Z');
        const APRIL = Date.parse('2026-04-01T00:00:00Z');
        const run = (args: string[]) => cli(args, {});

        it('prints the IDs of [from, to] for the layout: IDs of the interval inside, the milliseconds around it outside', async () => {
          const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
          const { code, stdout } = await run([
            'bounds',
            '2026-03-01',
            '2026-03-31T23:59:59.999Z',
            '--json',
          ]);
          expect(code).toBe(0);
          const json = JSON.parse(stdout) as Record<string, unknown>;
          expect(json).toEqual({
            from: MARCH,
            to: APRIL - 1,
            min: expect.stringMatching(/^\d+$/),
            max: expect.stringMatching(/^\d+$/),
            // unix_ts_ms in hex: 019ca6b1dc00 and 019d4656ffff.
            uuidMin: '019ca6b1-dc00-7000-8000-000000000000',
            uuidMax: '019d4656-ffff-7fff-bfff-ffffffffffff',
          });
          const min = BigInt(json.min as string);
          const max = BigInt(json.max as string);
          expect(min).toBe(layout.compose(MARCH, 0, 0));
          expect(max).toBe(layout.compose(APRIL - 1, layout.maxWorkerId, layout.maxSequence));
          expect(layout.compose(MARCH - 1, layout.maxWorkerId, layout.maxSequence)).toBe(min - 1n);
          expect(layout.compose(APRIL, 0, 0)).toBe(max + 1n);
          // The same interval in ms and with an offset; one instant when `to` is left out.
          const offset = await run([
            'bounds',
            String(MARCH),
            '2026-04-01T07:59:59.999+08:00',
            '--json',
          ]);
          expect(JSON.parse(offset.stdout)).toEqual(json);
          const instant = JSON.parse((await run(['bounds', String(MARCH), '--json'])).stdout);
          expect(instant).toMatchObject({ from: MARCH, to: MARCH, min: json.min });
          const text = await run(['bounds', '2026-03-01']);
          expect(text.stdout).toContain(`min      ${json.min}\n`);
          expect(text.stdout).toContain('from     1772323200000 (2026-03-01T00:00:00.000Z)');
        });

        it('uses the layout options: js-safe and its epoch, data-centre bits, --epoch', async () => {
          const jsSafe = new SnowflakeLayout(JS_SAFE_EPOCH, SNOWFLAKE_LAYOUTS['js-safe']);
          const { stdout } = await run(['bounds', String(MARCH), '--layout', 'js-safe', '--json']);
          expect(JSON.parse(stdout)).toMatchObject({
            min: jsSafe.compose(MARCH, 0, 0).toString(),
            max: jsSafe.compose(MARCH, jsSafe.maxWorkerId, jsSafe.maxSequence).toString(),
          });
          // Data-centre bits split the worker field: the bounds span every data centre, the same IDs.
          const split = await run(['bounds', String(MARCH), '--data-center-bits', '3', '--json']);
          expect(JSON.parse(split.stdout)).toEqual(
            JSON.parse((await run(['bounds', String(MARCH), '--json'])).stdout),
          );
          const epoch = await run(['bounds', String(MARCH), '--epoch', String(MARCH), '--json']);
          expect(JSON.parse(epoch.stdout)).toMatchObject({ min: '0', max: String(2 ** 22 - 1) });
        });

        it('refuses times outside the layout, a reversed interval and bad text with exit 1 and the code; usage with 2', async () => {
          const cases: Array<[string[], string]> = [
            [['bounds', '2010-11-04T01:42:54.656Z'], 'LEAF_TIME_BEFORE_EPOCH'],
            [['bounds', '2026-03-01', '2081-01-01'], 'LEAF_TIME_BEYOND_LAYOUT'],
            [['bounds', '2026-03-02', '2026-03-01'], 'LEAF_INVALID_ARGUMENT'],
            [['bounds', '2026-02-30'], 'LEAF_INVALID_ARGUMENT'],
            [['bounds', '2026-03-01T10:00'], 'LEAF_INVALID_ARGUMENT'],
            [['bounds', 'yesterday'], 'LEAF_INVALID_ARGUMENT'],
          ];
          for (const [args, code] of cases) {
            const result = await run(args);
            expect({ args, code: result.code, stderr: result.stderr }).toEqual({
              args,
              code: 1,
              stderr: expect.stringContaining(`[${code}]`),
            });
          }
          expect((await run(['bounds'])).code).toBe(2);
          expect((await run(['bounds', '1', '2', '3'])).code).toBe(2);
          expect((await run(['bounds', '2026-03-01', '--layout', 'nope'])).code).toBe(2);
        });
      });

      describe('workers', () => {
        const name = `cli-test-${process.pid}-${Date.now()}`;
        let zk: ZookeeperClient;

        beforeAll(async () => {
          zk = await connectZookeeperAdmin();
          const forever = `/snowflake/${name}/forever`;
          await zk.mkdirp(forever);
          await zk.mkdirp(`/snowflake/${name}/alive`);
          const write = (ip: string, port: number, data: object) =>
            zk.createPersistentSequential(
              `${forever}/${ip}:${port}-`,
              Buffer.from(JSON.stringify({ ip, port, ...data })),
            );
          const now = Date.now();
          await write('10.0.0.1', 8080, {
            timestamp: now,
            reservedUntil: now + 10_000,
            horizon: now + 60_000,
            run: 'run-a',
          });
          await write('10.0.0.2', 8080, { timestamp: now - 100_000 }); // a Java Leaf node
          await write('10.0.0.3', 8080, { timestamp: 'garbage' });
          await zk.createEphemeral(
            `/snowflake/${name}/alive/0`,
            Buffer.from(
              JSON.stringify({
                identity: '10.0.0.1:8080',
                pid: 4242,
                startedAt: now,
                run: 'run-a',
              }),
            ),
          );
        });

        afterAll(async () => {
          if (zk) {
            await deleteTree(zk, `/snowflake/${name}`).catch(() => undefined);
            await zk.close();
          }
        });

        const zkEnv = () => ({ LEAF_ZK_ADDRESS: zookeeperConnectString(), LEAF_NAME: name });

        it('lists every worker with its lease and liveness, as JSON', async () => {
          const result = await cli(['workers', '--json'], zkEnv());
          expect(result).toMatchObject({ code: 0, stderr: '' });
          const { workers } = JSON.parse(result.stdout) as {
            workers: Array<Record<string, unknown>>;
          };
          expect(workers.map((w) => [w.workerId, w.identity, w.alive])).toEqual([
            [0, '10.0.0.1:8080', true],
            [1, '10.0.0.2:8080', false],
            [2, '10.0.0.3:8080', false],
          ]);
          expect(workers[0]).toMatchObject({
            reservedUntil: expect.any(Number),
            horizon: expect.any(Number),
            lastWrite: expect.any(Number),
            leaseActive: true,
            heldBy: '10.0.0.1:8080',
            holder: { identity: '10.0.0.1:8080', pid: 4242, run: 'run-a' },
            error: null,
          });
          expect(workers[1]).toMatchObject({
            reservedUntil: null,
            horizon: null,
            leaseActive: false,
          });
          expect(workers[2]).toMatchObject({
            lastWrite: null,
            error: expect.stringMatching(/timestamp/),
          });
        });

        it('prints a table; an empty namespace says so', async () => {
          const table = await cli(['workers'], zkEnv());
          expect(table.code).toBe(0);
          expect(table.stdout.split('\n')[0]).toMatch(
            /^worker\s+identity\s+held by\s+alive\s+last write\s+reservedUntil\s+horizon \(until\)/,
          );
          expect(table.stdout).toMatch(/0\s+10\.0\.0\.1:8080\s+yes/);
          const empty = await cli(['workers'], { ...zkEnv(), LEAF_NAME: `${name}-none` });
          expect(empty.code).toBe(0);
          expect(empty.stdout).toMatch(/No snowflake workers/);
        });

        it('without LEAF_ZK_ADDRESS exits 2; an unreachable ZooKeeper exits 3', async () => {
          const noZk = await cli(['workers'], {});
          expect(noZk.code).toBe(2);
          expect(noZk.stderr).toMatch(/LEAF_ZK_ADDRESS/);
          const down = await cli(['workers'], {
            LEAF_ZK_ADDRESS: '127.0.0.1:1',
            LEAF_ZK_CONNECT_TIMEOUT_MS: '500',
          });
          expect(down.code).toBe(3);
          // The native client logs its own connection errors on stderr before ours.
          expect(down.stderr).toMatch(/^leaf: ZooKeeper at 127\.0\.0\.1:1/m);
        });

        it('as a child process: exit codes 0, 1, 2 and 3 on its own stdout and stderr, and it ends once done', async () => {
          // All at once: each child spends about 2 s of CPU loading the app's modules.
          const [help, tagsJson, workersJson, missing, usageError, down] = await Promise.all([
            spawnCli(['--help'], {}),
            spawnCli(['tags', 'show', 'cli-orders', '--json'], env),
            spawnCli(['workers', '--json'], zkEnv()),
            spawnCli(['tags', 'show', 'nope'], env),
            spawnCli(['frob'], env),
            spawnCli(['tags', 'list'], { LEAF_DB_URL: unreachable }),
          ]);
          // Exit code 0 (a timeout would be null): the database and ZooKeeper connections closed.
          expect(help).toMatchObject({ code: 0, stderr: '' });
          expect(help.stdout).toMatch(/^Usage: leaf <command>/);
          expect(tagsJson).toMatchObject({ code: 0, stderr: '' });
          expect(JSON.parse(tagsJson.stdout)).toEqual([
            expect.objectContaining({ biz_tag: 'cli-orders', step: 50 }),
          ]);
          expect(workersJson).toMatchObject({ code: 0, stderr: '' });
          expect(
            (
              JSON.parse(workersJson.stdout) as { workers: Array<{ identity: string }> }
            ).workers.map((w) => w.identity),
          ).toEqual(['10.0.0.1:8080', '10.0.0.2:8080', '10.0.0.3:8080']);
          expect(missing).toMatchObject({ code: 1, stdout: '' });
          expect(missing.stderr).toMatch(/^leaf: \[LEAF_TAG_NOT_FOUND\]/);
          expect(usageError).toMatchObject({ code: 2, stdout: '' });
          expect(usageError.stderr).toMatch(
            /^leaf: unknown command "frob"\n\nUsage: leaf <command>/,
          );
          expect(down).toMatchObject({ code: 3, stdout: '' });
          expect(down.stderr).toMatch(/^leaf: cannot open the database/);
        });
      });
    },
  );
}
