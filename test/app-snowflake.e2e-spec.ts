/**
 * Snowflake mode over HTTP, the application built exactly as `main.ts` builds it
 * (`createApp(loadAppConfig(env))`): the embedded default (no ZooKeeper, worker ID from
 * LEAF_WORKER_ID), the mode switched off, and three instances sharing a real ZooKeeper
 * namespace under concurrent load, one of them restarted.
 *
 * Decoding with snowflake mode off is pinned here: a well-formed ID is 404
 * LEAF_MODE_DISABLED (the epoch is part of the snowflake configuration; a disabled mode has
 * none to decode with), a malformed one is still 400.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LeafErrorCode, SnowflakeLayout, SnowflakeService } from 'nestjs-leaf';
import { workerStateFileName } from '@app/leaf/core/snowflake/worker-state';
import type { ZookeeperClient } from '@app/leaf/adapters/zookeeper/zookeeper.client';
import {
  expectLeafError,
  expectNoStackTrace,
  inject,
  startApp,
  tempDir,
  type InjectedAnswer,
} from './support/app';
import { BAD_KEYS, badCounts } from './support/bad-input';
import { HttpClient, runBounded } from './support/http-client';
import { describeWithServices, zookeeperConnectString } from './support/services';
import { connectZookeeperAdmin, deleteTree } from './support/zookeeper';

/** Leaf's default epoch, which the application uses. */
const EPOCH = 1288834974657;
const layout = new SnowflakeLayout(EPOCH);
const TWO_TO_53 = 2n ** 53n;
const MAX_ID = 2n ** 63n - 1n;
/** Leaf's decode format: `"<ms>(yyyy-MM-dd HH:mm:ss.SSS)"`. */
const LEAF_TIMESTAMP = /^(\d+)\((\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\)$/;

/** `yyyy-MM-dd HH:mm:ss.SSS` of `ms`, in UTC as the application prints it. */
function leafDate(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

/** The whole decode answer for an ID composed of these fields. */
function decodeAnswerOf(timestamp: number, workerId: number, sequence: number) {
  return {
    timestamp: `${timestamp}(${leafDate(timestamp)})`,
    workerId: String(workerId),
    sequenceId: String(sequence),
    id: layout.compose(timestamp, workerId, sequence).toString(),
    timestampMs: String(timestamp),
    isoDate: new Date(timestamp).toISOString(),
    dataCenterId: '0',
  };
}

function expectStrictlyIncreasing(ids: readonly bigint[]): void {
  for (let i = 1; i < ids.length; i++) {
    if (!(ids[i]! > ids[i - 1]!)) {
      throw new Error(`IDs not strictly increasing at ${i}: ${ids[i - 1]} then ${ids[i]}`);
    }
  }
}

/** The body of a 200 `ids` answer: `{ key, ids }` with every ID a decimal string. */
function parseIds(answer: { status: number; body: string }, key: string, count: number): bigint[] {
  expect({ status: answer.status, body: answer.body }).toEqual({
    status: 200,
    body: expect.any(String),
  });
  const body = JSON.parse(answer.body) as { key: string; ids: unknown[] };
  expect(Object.keys(body).sort()).toEqual(['ids', 'key']);
  expect(body.key).toBe(key);
  expect(body.ids).toHaveLength(count);
  for (const id of body.ids) expect(id).toEqual(expect.stringMatching(/^[1-9]\d*$/));
  return (body.ids as string[]).map((id) => BigInt(id));
}

/** A 200 `get` answer in Leaf's format: text/plain, a decimal, no newline. */
function parseGet(answer: {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}): bigint {
  expect({
    status: answer.status,
    type: answer.headers['content-type'],
    body: answer.body,
  }).toEqual({
    status: 200,
    type: 'text/plain; charset=utf-8',
    body: expect.stringMatching(/^[1-9]\d*$/),
  });
  return BigInt(answer.body);
}

const asAnswer = (a: InjectedAnswer) => ({
  status: a.statusCode,
  headers: a.headers,
  body: a.body,
});

describe('snowflake routes over HTTP, embedded default (no ZooKeeper)', () => {
  const WORKER_ID = 7;
  const MAX_BATCH = 50;
  let state: ReturnType<typeof tempDir>;
  let env: Record<string, string>;
  let app: NestFastifyApplication;
  /** Every answer of this block, for the "no 5xx, no stack trace" check at the end. */
  const answers: Array<{ url: string; answer: InjectedAnswer }> = [];
  /** Every ID issued in this block, in order of issue. */
  const issued: bigint[] = [];

  async function call(
    url: string,
    options: { method?: string; headers?: Record<string, string> } = {},
  ): Promise<InjectedAnswer> {
    const answer = await inject(app, url, options);
    answers.push({ url: `${options.method ?? 'GET'} ${url}`, answer });
    return answer;
  }

  const issuedCount = (): number => app.get(SnowflakeService).status().worker!.generator.issued;

  beforeAll(async () => {
    state = tempDir('leaf-app-snowflake');
    // Only what a bare machine has: no ZooKeeper, a state directory, a worker ID.
    env = {
      LEAF_SEGMENT_ENABLED: 'false',
      LEAF_STATE_DIR: state.path,
      LEAF_WORKER_ID: String(WORKER_ID),
      LEAF_MAX_BATCH: String(MAX_BATCH),
    };
    app = await startApp(env);
  });

  afterAll(async () => {
    await app?.close();
    state?.remove();
  });

  describe('issuing', () => {
    it("GET /api/snowflake/get/{key}: Leaf's text/plain decimal beyond 2^53, no newline", async () => {
      const id = parseGet(asAnswer(await call('/api/snowflake/get/order')));
      expect(id).toBeGreaterThan(TWO_TO_53);
      expect(id).toBeLessThanOrEqual(MAX_ID);
      expect(layout.decode(id).workerId).toBe(WORKER_ID);
      issued.push(id);
    });

    it('consecutive answers strictly increase, whatever the key', async () => {
      const ids: bigint[] = [];
      for (let i = 0; i < 300; i++) {
        ids.push(parseGet(asAnswer(await call(`/api/snowflake/get/key-${i % 3}`))));
      }
      expectStrictlyIncreasing([...issued, ...ids]);
      expect(new Set(ids.map((id) => layout.decode(id).workerId))).toEqual(new Set([WORKER_ID]));
      issued.push(...ids);
    });

    it('GET /api/snowflake/ids/{key}?count=N: N increasing IDs as JSON strings, up to the cap', async () => {
      for (const count of [1, 20, MAX_BATCH]) {
        const answer = await call(`/api/snowflake/ids/order?count=${count}`);
        expect(answer.headers['content-type']).toMatch(/^application\/json/);
        const ids = parseIds(asAnswer(answer), 'order', count);
        expectStrictlyIncreasing([...issued, ...ids]);
        issued.push(...ids);
        // get and ids share one sequence.
        const next = parseGet(asAnswer(await call('/api/snowflake/get/order')));
        expectStrictlyIncreasing([...issued, next]);
        issued.push(next);
      }
    });

    it('a 128-character key is accepted (and ignored by the generator)', async () => {
      const id = parseGet(asAnswer(await call(`/api/snowflake/get/${'k'.repeat(128)}`)));
      const ids = parseIds(
        asAnswer(await call(`/api/snowflake/ids/${'k'.repeat(128)}?count=2`)),
        'k'.repeat(128),
        2,
      );
      expectStrictlyIncreasing([...issued, id, ...ids]);
      issued.push(id, ...ids);
    });
  });

  describe('GET /decodeSnowflakeId', () => {
    it("decodes an issued ID: worker ID, Leaf's timestamp (within a second of now) and sequence", async () => {
      const before = Date.now();
      const id = parseGet(asAnswer(await call('/api/snowflake/get/decode-me')));
      const after = Date.now();
      issued.push(id);
      const answer = await call(`/decodeSnowflakeId?snowflakeId=${id}`);
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      const body = JSON.parse(answer.body) as Record<string, string>;
      // Leaf's fields, all strings, then ours.
      expect(Object.keys(body)).toEqual([
        'timestamp',
        'workerId',
        'sequenceId',
        'id',
        'timestampMs',
        'isoDate',
        'dataCenterId',
      ]);
      const [, ms, date] = LEAF_TIMESTAMP.exec(body.timestamp!) ?? [];
      expect(ms).toBeDefined();
      expect(Number(ms)).toBeGreaterThanOrEqual(before - 1000);
      expect(Number(ms)).toBeLessThanOrEqual(after + 1000);
      expect(date).toBe(leafDate(Number(ms)));
      expect(body).toEqual({
        timestamp: body.timestamp,
        workerId: String(WORKER_ID),
        sequenceId: String(id & 4095n),
        id: id.toString(),
        timestampMs: ms,
        isoDate: new Date(Number(ms)).toISOString(),
        dataCenterId: '0',
      });
    });

    const composed: Array<[string, number, number, number]> = [
      ['the smallest ID (0)', EPOCH, 0, 0],
      ['worker 1023, sequence 4095', Date.UTC(2024, 1, 29, 23, 59, 59, 999), 1023, 4095],
      ['a sequence from the random start range', Date.UTC(2020, 0, 1), 512, 99],
      ['the largest ID (2^63-1)', layout.maxTimestamp, 1023, 4095],
      ['now, worker 7', Date.now(), 7, 1],
    ];

    it.each(composed)(
      'a hand-composed ID round-trips exactly: %s',
      async (_label, timestamp, workerId, sequence) => {
        const id = layout.compose(timestamp, workerId, sequence);
        const answer = await call(`/decodeSnowflakeId?snowflakeId=${id}`);
        expect(answer.statusCode).toBe(200);
        expect(JSON.parse(answer.body)).toEqual(decodeAnswerOf(timestamp, workerId, sequence));
      },
    );

    it('the largest ID is 9223372036854775807', () => {
      expect(layout.compose(layout.maxTimestamp, 1023, 4095)).toBe(MAX_ID);
    });

    const badIds: Array<[string, string]> = [
      ['missing', ''],
      ['empty', 'snowflakeId='],
      ['non-numeric', 'snowflakeId=abc'],
      ['negative', 'snowflakeId=-1'],
      ['2^63', 'snowflakeId=9223372036854775808'],
      ['20 digits', 'snowflakeId=18446744073709551615'],
      ['an exponent', 'snowflakeId=1e3'],
      ['a fraction', 'snowflakeId=1.0'],
      ['hex', 'snowflakeId=0x10'],
      ['a leading plus', 'snowflakeId=%2B1'],
      ['a leading space', 'snowflakeId=%201'],
      ['repeated', 'snowflakeId=1&snowflakeId=2'],
    ];

    it.each(badIds)(
      '400 LEAF_INVALID_ARGUMENT for a snowflakeId that is %s',
      async (_label, query) => {
        const answer = await call(`/decodeSnowflakeId${query ? `?${query}` : ''}`);
        expectLeafError(answer, 400, LeafErrorCode.INVALID_ARGUMENT);
      },
    );
  });

  describe('400 for malformed input, issuing nothing', () => {
    let issuedBefore: number;

    beforeAll(() => {
      issuedBefore = issuedCount();
    });

    it.each(['get', 'ids'])('%s: empty key', async (route) => {
      const url = route === 'get' ? '/api/snowflake/get/' : '/api/snowflake/ids/?count=1';
      expectLeafError(await call(url), 400, LeafErrorCode.INVALID_ARGUMENT);
    });

    for (const route of ['get', 'ids'] as const) {
      it.each(BAD_KEYS)(`${route}: key with %s`, async (_label, key) => {
        const url =
          route === 'get' ? `/api/snowflake/get/${key}` : `/api/snowflake/ids/${key}?count=1`;
        expectLeafError(await call(url), 400, LeafErrorCode.INVALID_ARGUMENT);
      });
    }

    it.each(badCounts(MAX_BATCH))('ids: count %s', async (_label, query) => {
      const answer = await call(`/api/snowflake/ids/order${query ? `?${query}` : ''}`);
      const body = expectLeafError(answer, 400, LeafErrorCode.INVALID_ARGUMENT);
      expect(body.leafCode).toBeUndefined();
    });

    it('no ID was issued by any of the above', () => {
      expect(issuedCount()).toBe(issuedBefore);
    });
  });

  describe('only GET is served', () => {
    const methods = ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];
    const urls = [
      '/api/snowflake/get/order',
      '/api/snowflake/ids/order?count=1',
      `/decodeSnowflakeId?snowflakeId=${layout.compose(EPOCH + 1, 1, 1)}`,
    ];

    it.each(methods)('%s is 404 in the error contract and issues nothing', async (method) => {
      const before = issuedCount();
      for (const url of urls) {
        const answer = await call(url, { method });
        expect({ url, status: answer.statusCode }).toEqual({ url, status: 404 });
        if (method !== 'HEAD') {
          expect(answer.headers['content-type']).toMatch(/^application\/json/);
          expect(JSON.parse(answer.body)).toEqual({
            statusCode: 404,
            code: expect.stringMatching(/^LEAF_/),
            message: expect.any(String),
          });
        }
      }
      expect(issuedCount()).toBe(before);
    });
  });

  describe('health', () => {
    it('/health/ready: snowflake up with the worker ID, embedded', async () => {
      const answer = await call('/health/ready');
      expect(answer.statusCode).toBe(200);
      const body = JSON.parse(answer.body) as { status: string; info: Record<string, unknown> };
      expect(body.status).toBe('ok');
      expect(body.info.snowflake).toEqual({
        status: 'up',
        workerId: WORKER_ID,
        mode: 'embedded',
        coordination: 'none',
        reservedUntil: expect.any(Number),
        zookeeper: null,
      });
      expect((body.info.snowflake as { reservedUntil: number }).reservedUntil).toBeGreaterThan(
        Date.now(),
      );
    });

    it('/health/live is up', async () => {
      const answer = await call('/health/live');
      expect(answer.statusCode).toBe(200);
    });
  });

  it('answered nothing with a 5xx or a stack trace', () => {
    expect(answers.length).toBeGreaterThan(100);
    for (const { url, answer } of answers) {
      expect({ url, status: answer.statusCode < 500 }).toEqual({ url, status: true });
      expectNoStackTrace(answer.body);
    }
  });

  it('after a restart on the same state directory, issues only larger IDs, quickly', async () => {
    const highest = issued.reduce((a, b) => (a > b ? a : b));
    expect(issued.length).toBeGreaterThan(300);
    await app.close();
    // Its lease is on disk; the next start reads it.
    expect(readdirSync(state.path)).toContain(
      workerStateFileName({ kind: 'embedded', name: 'leaf', workerId: WORKER_ID }),
    );
    const started = Date.now();
    app = await startApp(env);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(app.get(SnowflakeService).status().worker!.startupWaitMs).toBeLessThan(100);
    const id = parseGet(asAnswer(await inject(app, '/api/snowflake/get/order')));
    const ids = parseIds(
      asAnswer(await inject(app, '/api/snowflake/ids/order?count=50')),
      'order',
      50,
    );
    expect(id).toBeGreaterThan(highest);
    expectStrictlyIncreasing([id, ...ids]);
    expect(layout.decode(id).workerId).toBe(WORKER_ID);
  });
});

describe('snowflake mode disabled (LEAF_SNOWFLAKE_ENABLED=false)', () => {
  let state: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    state = tempDir('leaf-snowflake-off');
    app = await startApp({
      LEAF_SEGMENT_ENABLED: 'false',
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_STATE_DIR: state.path,
    });
  });

  afterAll(async () => {
    await app?.close();
    state?.remove();
  });

  it.each(['/api/snowflake/get/order', '/api/snowflake/ids/order?count=5'])(
    '%s: 404 LEAF_MODE_DISABLED',
    async (url) => {
      expectLeafError(await inject(app, url), 404, LeafErrorCode.MODE_DISABLED);
    },
  );

  it('decodeSnowflakeId: a well-formed ID is 404 LEAF_MODE_DISABLED, a malformed one still 400', async () => {
    const id = layout.compose(Date.now(), 3, 3);
    expectLeafError(
      await inject(app, `/decodeSnowflakeId?snowflakeId=${id}`),
      404,
      LeafErrorCode.MODE_DISABLED,
    );
    expectLeafError(
      await inject(app, '/decodeSnowflakeId?snowflakeId=1e3'),
      400,
      LeafErrorCode.INVALID_ARGUMENT,
    );
    expectLeafError(await inject(app, '/decodeSnowflakeId'), 400, LeafErrorCode.INVALID_ARGUMENT);
  });

  it('readiness reports snowflake up and disabled; no state file was written', async () => {
    const answer = await inject(app, '/health/ready');
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toEqual(
      expect.objectContaining({
        status: 'ok',
        info: expect.objectContaining({ snowflake: { status: 'up', enabled: false } }),
      }),
    );
    expect(readdirSync(state.path)).toEqual([]);
  });
});

describeWithServices(['zookeeper'], 'three instances on one ZooKeeper namespace', () => {
  const ADMIN_TOKEN = 'e2e-admin-token-0123456789abcdef';
  const ADVERTISE = ['127.0.0.1:1001', '127.0.0.1:1002', '127.0.0.1:1003'];
  /** With '-' on purpose: the worker ID is parsed from the last '-' of the node name. */
  const name = `e2e-${randomBytes(4).toString('hex')}`;
  const forever = `/snowflake/${name}/forever`;
  let admin: ZookeeperClient;
  const dirs: Array<ReturnType<typeof tempDir>> = [];
  const apps: Array<NestFastifyApplication | undefined> = [];
  const clients: Array<HttpClient | undefined> = [];
  /** Worker ID of each instance, from its IDs. */
  const workerIds: number[] = [];
  /** Every ID each instance issued. */
  const issuedBy: bigint[][] = [[], [], []];

  const envOf = (i: number): Record<string, string> => ({
    LEAF_SEGMENT_ENABLED: 'false',
    LEAF_NAME: name,
    LEAF_ZK_ADDRESS: zookeeperConnectString(),
    LEAF_SNOWFLAKE_ADVERTISE: ADVERTISE[i]!,
    LEAF_STATE_DIR: dirs[i]!.path,
    LEAF_ADMIN_TOKEN: ADMIN_TOKEN,
  });

  async function boot(i: number): Promise<void> {
    const app = await startApp(envOf(i), { listen: true });
    apps[i] = app;
    clients[i] = new HttpClient(HttpClient.baseUrlOf(app), 16);
  }

  async function shut(i: number): Promise<void> {
    clients[i]?.close();
    clients[i] = undefined;
    const app = apps[i];
    apps[i] = undefined;
    await app?.close();
  }

  /** Children of the namespace: `ip:port` → sequence. */
  async function nodes(): Promise<Map<string, number>> {
    const children = await admin.getChildren(forever);
    return new Map(
      children.map((child) => {
        const dash = child.lastIndexOf('-');
        return [child.slice(0, dash), Number(child.slice(dash + 1))];
      }),
    );
  }

  beforeAll(async () => {
    admin = await connectZookeeperAdmin();
    for (let i = 0; i < 3; i++) dirs.push(tempDir(`leaf-app-sf-zk-${i}`));
  });

  afterAll(async () => {
    await Promise.all([0, 1, 2].map(shut));
    if (admin) {
      await deleteTree(admin, `/snowflake/${name}`);
      await admin.close();
    }
    for (const dir of dirs) dir.remove();
  });

  it('started at once, they get three different worker IDs, equal to their node sequences', async () => {
    await Promise.all([0, 1, 2].map(boot));
    for (let i = 0; i < 3; i++) {
      const id = parseGet(await clients[i]!.send('/api/snowflake/get/zk'));
      issuedBy[i]!.push(id);
      workerIds.push(layout.decode(id).workerId);
    }
    expect(new Set(workerIds).size).toBe(3);
    // A fresh namespace hands out 0, 1, 2 (in whichever order the creates landed).
    expect([...workerIds].sort()).toEqual([0, 1, 2]);
    const registered = await nodes();
    expect(registered.size).toBe(3);
    for (let i = 0; i < 3; i++) expect(registered.get(ADVERTISE[i]!)).toBe(workerIds[i]);
  });

  it('GET /admin/workers (admin token): every worker ID, who holds it, alive, until when', async () => {
    expect((await clients[0]!.send('/admin/workers')).status).toBe(401);
    const answer = await clients[0]!.send('/admin/workers', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(answer.status).toBe(200);
    const { workers } = JSON.parse(answer.body) as { workers: Array<Record<string, unknown>> };
    expect(workers.map((w) => [w.workerId, w.heldBy, w.alive])).toEqual(
      [0, 1, 2].map((id) => [id, ADVERTISE[workerIds.indexOf(id)], true]),
    );
    for (const worker of workers) {
      expect(worker).toMatchObject({
        horizon: expect.any(Number),
        horizonIso: expect.any(String),
        leaseActive: true,
        holder: expect.objectContaining({ pid: expect.any(Number) }),
      });
    }
  });

  it('/health/ready: snowflake up with the worker ID, through ZooKeeper', async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await clients[i]!.send('/health/ready');
      expect(answer.status).toBe(200);
      const body = JSON.parse(answer.body) as { info: Record<string, unknown> };
      expect(body.info.snowflake).toEqual({
        status: 'up',
        workerId: workerIds[i],
        mode: 'zookeeper',
        coordination: 'zookeeper',
        reservedUntil: expect.any(Number),
        zookeeper: true,
      });
    }
  });

  it('under concurrent load (3 × 1500 requests mixing get and ids?count=20) no ID repeats', async () => {
    const REQUESTS = 1500;
    const BATCH = 20;
    const statuses = new Map<number, number>();
    await Promise.all(
      [0, 1, 2].map(async (i) => {
        const client = clients[i]!;
        const batches = await runBounded(REQUESTS, 16, async (n) => {
          const answer =
            n % 2 === 0
              ? await client.send(`/api/snowflake/get/load-${n % 7}`)
              : await client.send(`/api/snowflake/ids/load-${n % 7}?count=${BATCH}`);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          if (answer.status !== 200) return [];
          if (n % 2 === 0) return [BigInt(answer.body)];
          const ids = (JSON.parse(answer.body) as { ids: string[] }).ids.map((id) => BigInt(id));
          expectStrictlyIncreasing(ids);
          return ids;
        });
        issuedBy[i]!.push(...batches.flat());
      }),
    );
    expect(Object.fromEntries(statuses)).toEqual({ 200: 3 * REQUESTS });
    const perInstance = REQUESTS / 2 + (REQUESTS / 2) * BATCH;
    const all = issuedBy.flat();
    expect(all).toHaveLength(3 * (perInstance + 1));
    expect(new Set(all).size).toBe(all.length);
    for (let i = 0; i < 3; i++) {
      const seen = new Set(issuedBy[i]!.map((id) => layout.decode(id).workerId));
      expect(seen).toEqual(new Set([workerIds[i]]));
    }
  }, 60_000);

  it('a restarted instance keeps its worker ID, starts quickly and issues only larger IDs', async () => {
    const i = 1;
    const before = issuedBy[i]!;
    const highest = before.reduce((a, b) => (a > b ? a : b));
    const nodePath = `${forever}/${ADVERTISE[i]}-${String(workerIds[i]).padStart(10, '0')}`;

    await shut(i);
    // The graceful close recorded the final lease: the last millisecond it used.
    const data = JSON.parse((await admin.getData(nodePath)).data.toString()) as {
      reservedUntil: number;
    };
    expect(data.reservedUntil).toBeGreaterThanOrEqual(layout.decode(highest).timestamp);

    const started = Date.now();
    await boot(i);
    const startMs = Date.now() - started;
    // Without the final lease it would wait out the whole lease (10 s by default).
    expect(startMs).toBeLessThan(3000);
    expect(apps[i]!.get(SnowflakeService).status().worker!.startupWaitMs).toBeLessThan(100);

    const after = [parseGet(await clients[i]!.send('/api/snowflake/get/zk'))];
    after.push(...parseIds(await clients[i]!.send('/api/snowflake/ids/zk?count=500'), 'zk', 500));
    expectStrictlyIncreasing(after);
    expect(after[0]!).toBeGreaterThan(highest);
    expect(new Set(after.map((id) => layout.decode(id).workerId))).toEqual(new Set([workerIds[i]]));
    // The same node, no new one.
    const registered = await nodes();
    expect(registered.size).toBe(3);
    expect(registered.get(ADVERTISE[i]!)).toBe(workerIds[i]);
    const ready = JSON.parse((await clients[i]!.send('/health/ready')).body) as {
      info: { snowflake: { status: string; workerId: number } };
    };
    expect(ready.info.snowflake).toMatchObject({ status: 'up', workerId: workerIds[i] });
  });
});
