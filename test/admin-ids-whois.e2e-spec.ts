/**
 * Who issued an ID (`GET /admin/ids/{id}`, `leaf ids whois`; docs/operations.md, "Who issued
 * an ID") against the app started from its environment on MariaDB and on PostgreSQL, the ID
 * journal on by the app's default: two instances on the same tags and the same lease table
 * (database coordination, no ZooKeeper). Segment IDs taken from each are attributed to the
 * instance and range that issued them; a sequence ID to the elected issuer and its term; a
 * snowflake ID to the holder of its worker ID, also after that worker ID was released and
 * claimed by a third instance, or its holder killed (kill -9) and the worker ID claimed once the
 * (3 s) lease expired; ZooKeeper and configured worker IDs; the CLI prints what the route answers.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../src/bootstrap';
import { loadAppConfig } from '../src/config/app-config';
import { runCli } from '../src/cli';
import type { IdOriginJson } from '../src/admin/id-origin.json';
import { sparePort } from './system/harness/mariadb-server';
import { AppProcess, killAllAppProcesses } from './support/app-process';
import { expectLeafError, tempDir, type InjectedAnswer } from './support/app';
import { SERVER_FLAVOURS, type ServerTestDatabase } from './support/server-databases';
import { describeWithServices, zookeeperConnectString } from './support/services';
import { deleteTree, withZookeeperAdmin } from './support/zookeeper';

jest.setTimeout(90_000);

const TOKEN = 'whois-admin-token-0123456789abcdef';

interface Instance {
  readonly label: string;
  readonly identity: string;
  readonly port: number;
  readonly app: NestFastifyApplication;
}

async function call(
  instance: Instance,
  url: string,
  options: { method?: 'GET' | 'POST'; body?: unknown; token?: string | null } = {},
): Promise<InjectedAnswer> {
  const token = options.token === undefined ? TOKEN : options.token;
  const res = await instance.app
    .getHttpAdapter()
    .getInstance()
    .inject({
      method: options.method ?? 'GET',
      url,
      headers: {
        ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(options.body !== undefined ? { payload: JSON.stringify(options.body) } : {}),
    });
  return { statusCode: res.statusCode, headers: res.headers, body: res.body };
}

async function ids(instance: Instance, path: string): Promise<bigint[]> {
  const answer = await call(instance, path, { token: null });
  expect({ url: path, status: answer.statusCode, body: answer.body }).toMatchObject({
    status: 200,
  });
  return (JSON.parse(answer.body) as { ids: string[] }).ids.map(BigInt);
}

async function whois(instance: Instance, query: string): Promise<IdOriginJson> {
  const answer = await call(instance, `/admin/ids/${query}`);
  expect({ query, status: answer.statusCode, body: answer.body }).toMatchObject({ status: 200 });
  return JSON.parse(answer.body) as IdOriginJson;
}

/** `leaf ids whois …` against `instance` over HTTP: exit code and output. */
async function cli(instance: Instance, args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    ['ids', 'whois', ...args, '--url', `http://127.0.0.1:${instance.port}`],
    { env: { LEAF_ADMIN_TOKEN: TOKEN }, out: (line) => out.push(line), err: (l) => err.push(l) },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices([flavour.service], `who issued an ID, on ${flavour.label}`, () => {
    let db: ServerTestDatabase;
    const dirs: Array<ReturnType<typeof tempDir>> = [];
    const running: Instance[] = [];
    const name = `who${Date.now().toString(36)}`;

    /** One instance of the app, as the environment describes it, listening. */
    async function start(label: string): Promise<Instance> {
      const port = await sparePort();
      const state = tempDir(`leaf-whois-${label}`);
      dirs.push(state);
      const identity = `${label}.test:${port}`;
      const app = await createApp(
        loadAppConfig({
          LEAF_DB_URL: db.url,
          LEAF_NAME: name,
          PORT: String(port),
          LEAF_ADMIN_TOKEN: TOKEN,
          LEAF_STATE_DIR: state.path,
          // The journal's identity is the advertised one (LEAF_JOURNAL, LEAF_INSTANCE unset).
          LEAF_SNOWFLAKE_ADVERTISE: identity,
          LEAF_SNOWFLAKE_LEASE_MS: '3000',
          LEAF_SNOWFLAKE_HEARTBEAT_MS: '1000',
          LEAF_SNOWFLAKE_LEASE_MARGIN_MS: '500',
          LEAF_SEQUENCE_ENABLED: 'true',
          LEAF_SEQUENCE_ADVERTISE: `http://127.0.0.1:${port}`,
          LEAF_SEQUENCE_GROUPS: '1',
        }),
        { logger: ['error', 'warn'] },
      );
      await app.listen(port, '127.0.0.1');
      const instance = { label, identity, port, app };
      running.push(instance);
      return instance;
    }

    async function stop(instance: Instance): Promise<void> {
      running.splice(running.indexOf(instance), 1);
      await instance.app.close();
    }

    let a: Instance;
    let b: Instance;

    beforeAll(async () => {
      db = await flavour.create({ migrate: true });
      a = await start('a');
      b = await start('b');
      for (const tag of ['orders', 'seq']) {
        const created = await call(a, '/admin/tags', {
          method: 'POST',
          body: { biz_tag: tag, step: 10 },
        });
        expect(created.statusCode).toBe(201);
      }
    });

    afterAll(async () => {
      await killAllAppProcesses();
      await Promise.all(running.map((instance) => instance.app.close()));
      await db?.drop();
      for (const dir of dirs) dir.remove();
    });

    it('segment: the IDs of each instance are attributed to it and to the range they came from', async () => {
      const fromA = await ids(a, '/api/segment/ids/orders?count=3');
      const fromB = await ids(b, '/api/segment/ids/orders?count=3');
      const more = await ids(a, '/api/segment/ids/orders?count=12'); // past A's first range
      for (const [instance, taken] of [
        [a, [...fromA, ...more]],
        [b, fromB],
      ] as const) {
        for (const id of taken) {
          // Asked of either instance: the journal is in the database.
          const origin = await whois(b, `${id}?mode=segment&tag=orders`);
          expect(origin).toMatchObject({
            id: id.toString(),
            mode: 'segment',
            tag: 'orders',
            instance: instance.identity,
            term: null,
            grantedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          });
          expect(BigInt(origin.start!) <= id && id < BigInt(origin.end!)).toBe(true);
          // Unix ms of the granting process: no server's time zone shifts it.
          expect(Math.abs(Date.parse(origin.grantedAt!) - Date.now())).toBeLessThan(60_000);
        }
      }
      // One row per range granted: together they tile [1, max_id) without gap or overlap
      // (no hand-back while the instances run).
      const rows = await db.query<{ s: string; e: string }>(
        "SELECT CAST(start_id AS CHAR) AS s, CAST(end_id AS CHAR) AS e FROM leaf_alloc_journal WHERE biz_tag = 'orders' ORDER BY start_id",
      );
      const [row] = await db.query<{ m: string }>(
        "SELECT CAST(max_id AS CHAR) AS m FROM leaf_alloc WHERE biz_tag = 'orders'",
      );
      let next = 1n;
      for (const range of rows) {
        expect(BigInt(range.s)).toBe(next);
        next = BigInt(range.e);
      }
      expect(next).toBe(BigInt(row!.m));
    });

    it('sequence: an ID is attributed to the elected issuer, with its term', async () => {
      const [id] = await ids(b, '/api/sequence/ids/seq?count=1');
      const origin = await whois(a, `${id}?mode=sequence&tag=seq`);
      const [issuer] = await db.query<{ address: string; term: string }>(
        `SELECT address, CAST(term AS CHAR) AS term FROM leaf_sequence_issuer WHERE name = '${name}' AND group_id = 0`,
      );
      const elected = [a, b].find((i) => issuer!.address === `http://127.0.0.1:${i.port}`)!;
      expect(origin).toMatchObject({
        mode: 'sequence',
        tag: 'seq',
        instance: elected.identity,
        term: issuer!.term,
      });
      expect(BigInt(origin.start!) <= id! && id! < BigInt(origin.end!)).toBe(true);
    });

    it('snowflake: an ID is attributed to the holder of its worker ID, also after the worker ID was released and claimed again', async () => {
      const [fromA] = await ids(a, '/api/snowflake/ids/k?count=1');
      const [fromB] = await ids(b, '/api/snowflake/ids/k?count=1');
      const originA = await whois(b, `${fromA}?mode=snowflake`);
      const originB = await whois(a, `${fromB}?mode=snowflake`);
      expect(originA).toMatchObject({
        mode: 'snowflake',
        workerSource: 'database',
        instance: a.identity,
        holder: a.identity,
        epoch: expect.stringMatching(/^\d+$/),
        until: null,
      });
      expect(originB).toMatchObject({ instance: b.identity, holder: b.identity, until: null });
      expect(originA.workerId).not.toBe(originB.workerId);

      // B stops (its lease released at its horizon); C claims B's worker ID, one epoch on.
      await stop(b);
      const c = await start('c');
      const [fromC] = await ids(c, '/api/snowflake/ids/k?count=1');
      const originC = await whois(a, `${fromC}?mode=snowflake`);
      expect(originC).toMatchObject({
        workerId: originB.workerId,
        instance: c.identity,
        epoch: (BigInt(originB.epoch!) + 1n).toString(),
        until: null,
      });
      // B's ID still names B, its tenure now ended where C's began.
      const again = await whois(c, `${fromB}?mode=snowflake`);
      expect(again).toMatchObject({ instance: b.identity, epoch: originB.epoch });
      expect(again.until).not.toBeNull();
      expect(Date.parse(again.time!)).toBeLessThanOrEqual(Date.parse(again.until!));
      expect(Date.parse(originC.time!)).toBeGreaterThan(Date.parse(again.until!));
    });

    it('snowflake: a holder killed (kill -9, no release) and its worker ID claimed once its lease expired', async () => {
      const state = tempDir('leaf-whois-killed');
      dirs.push(state);
      const port = await sparePort();
      const identity = `d.test:${port}`;
      const d = AppProcess.spawn(
        {
          LEAF_DB_URL: db.url,
          LEAF_NAME: name,
          PORT: String(port),
          HOST: '127.0.0.1',
          LEAF_STATE_DIR: state.path,
          LEAF_SNOWFLAKE_ADVERTISE: identity,
          LEAF_SNOWFLAKE_LEASE_MS: '3000',
          LEAF_SNOWFLAKE_HEARTBEAT_MS: '1000',
          LEAF_SNOWFLAKE_LEASE_MARGIN_MS: '500',
          LEAF_SEGMENT_ENABLED: 'true',
        },
        { timeoutMs: 60_000 },
      );
      await d.listening();
      const answer = await fetch(`http://127.0.0.1:${port}/api/snowflake/ids/k?count=1`);
      const fromD = BigInt(((await answer.json()) as { ids: string[] }).ids[0]!);
      const originD = await whois(a, `${fromD}?mode=snowflake`);
      expect(originD).toMatchObject({ instance: identity, until: null });
      await d.stop('SIGKILL');
      // Past its lease (3 s) on the database's clock: the row is free to claim, at epoch + 1.
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      const e = await start('e');
      const [fromE] = await ids(e, '/api/snowflake/ids/k?count=1');
      expect(await whois(a, `${fromE}?mode=snowflake`)).toMatchObject({
        workerId: originD.workerId,
        instance: e.identity,
        epoch: (BigInt(originD.epoch!) + 1n).toString(),
      });
      const again = await whois(e, `${fromD}?mode=snowflake`);
      expect(again).toMatchObject({ instance: identity, epoch: originD.epoch });
      expect(Date.parse(again.time!)).toBeLessThanOrEqual(Date.parse(again.until!));
    });

    it('the CLI prints what the route answers', async () => {
      const [id] = await ids(a, '/api/segment/ids/orders?count=1');
      const route = await whois(a, `${id}?mode=segment&tag=orders`);
      const json = await cli(a, [String(id), '--mode', 'segment', '--tag', 'orders', '--json']);
      expect(json).toMatchObject({ code: 0, err: '' });
      expect(JSON.parse(json.out)).toEqual(route);
      const text = await cli(a, [String(id), '--mode', 'segment', '--tag', 'orders']);
      expect(text.code).toBe(0);
      expect(text.out).toContain(`instance   ${a.identity}`);
      expect(text.out).toContain(`start      ${route.start}`);

      const unknown = await cli(a, ['999999999', '--mode', 'segment', '--tag', 'orders']);
      expect(unknown).toMatchObject({ code: 1 });
      expect(unknown.err).toContain('[LEAF_ID_ORIGIN_UNKNOWN]');
      expect((await cli(a, ['9223372036854775808', '--mode', 'snowflake'])).code).toBe(2);
      expect((await cli(a, [String(id), '--mode', 'segment'])).code).toBe(2);
    });

    it('refuses bad input with 400, an unknown ID with 404, and answers nobody without the token', async () => {
      for (const query of [
        'abc?mode=segment&tag=orders',
        '9223372036854775808?mode=segment&tag=orders',
        '0?mode=segment&tag=orders',
        '-5?mode=segment&tag=orders',
        '12?mode=segment',
        '12?mode=other&tag=orders',
        '12?mode=segment&tag=a%00b',
        '12?mode=segment&tag=orders&tag=seq',
      ]) {
        expectLeafError(await call(a, `/admin/ids/${query}`), 400, 'LEAF_INVALID_ARGUMENT');
      }
      expectLeafError(
        await call(a, '/admin/ids/999999999?mode=segment&tag=orders'),
        404,
        'LEAF_ID_ORIGIN_UNKNOWN',
      );
      expectLeafError(
        await call(a, '/admin/ids/5?mode=segment&tag=no-such-tag'),
        404,
        'LEAF_ID_ORIGIN_UNKNOWN',
      );
      expectLeafError(
        await call(a, '/admin/ids/5?mode=segment&tag=orders', { token: null }),
        401,
        'LEAF_UNAUTHORIZED',
      );
    });
  });
}

describeWithServices(
  ['zookeeper'],
  'who issued an ID, worker IDs from ZooKeeper or configured',
  () => {
    const name = `whozk${Date.now().toString(36)}`;
    const dirs: Array<ReturnType<typeof tempDir>> = [];
    const apps: NestFastifyApplication[] = [];

    async function start(env: Record<string, string>): Promise<Instance> {
      const state = tempDir('leaf-whois-zk');
      dirs.push(state);
      const app = await createApp(
        loadAppConfig({
          LEAF_DB_URL: `sqlite:${state.path}/leaf.sqlite`,
          LEAF_NAME: name,
          LEAF_ADMIN_TOKEN: TOKEN,
          LEAF_STATE_DIR: state.path,
          ...env,
        }),
        { logger: ['error', 'warn'] },
      );
      await app.init();
      await app.getHttpAdapter().getInstance().ready();
      apps.push(app);
      return { label: name, identity: env.LEAF_SNOWFLAKE_ADVERTISE ?? '', port: 0, app };
    }

    afterAll(async () => {
      await Promise.all(apps.map((app) => app.close()));
      await withZookeeperAdmin((zk) => deleteTree(zk, `/snowflake/${name}`)).catch(() => undefined);
      for (const dir of dirs) dir.remove();
    });

    it('ZooKeeper: the worker node’s identity, forever its name', async () => {
      const zk = await start({
        LEAF_ZK_ADDRESS: zookeeperConnectString(),
        LEAF_SNOWFLAKE_ADVERTISE: '127.0.0.7:8123',
      });
      const [id] = await ids(zk, '/api/snowflake/ids/k?count=1');
      expect(await whois(zk, `${id}?mode=snowflake`)).toMatchObject({
        mode: 'snowflake',
        workerSource: 'zookeeper',
        instance: '127.0.0.7:8123',
        holder: '127.0.0.7:8123',
        epoch: null,
        note: null,
      });
    });

    it('a configured worker ID: the ID’s fields, and that nobody records who used it', async () => {
      const fixed = await start({ LEAF_WORKER_ID: '9' });
      const [id] = await ids(fixed, '/api/snowflake/ids/k?count=1');
      expect(await whois(fixed, `${id}?mode=snowflake`)).toMatchObject({
        workerSource: 'explicit',
        workerId: 9,
        instance: null,
        holder: null,
        note: expect.stringContaining('nobody records'),
      });
    });
  },
);
