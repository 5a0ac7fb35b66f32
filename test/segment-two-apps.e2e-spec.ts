import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SchedulerRegistry } from '@nestjs/schedule';
import { SegmentService } from 'nestjs-leaf';
import { LEAF_JOB_NAMES } from '@app/leaf/nest/leaf.constants';
import { startApp, tempDir } from './support/app';
import { HttpClient } from './support/http-client';
import { describeWithServices } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const TAG = 'shared-tag';
const REQUESTS_PER_APP = 2000;
/** Connections per application; each carries its requests one after another. */
const CONNECTIONS_PER_APP = 16;

/** What one application handed out during the load. */
interface AppHarvest {
  /** Every ID, from all three routes. */
  readonly all: bigint[];
  /** Per connection, the IDs served from the buffer (`get` and `ids`) in the order received. */
  readonly perConnection: bigint[][];
  readonly routes: { get: number; ids: number; range: number };
}

/**
 * `REQUESTS_PER_APP` requests against one application over `CONNECTIONS_PER_APP` keep-alive
 * connections, mixing `get`, `ids?count=7` and `range?count=5`.
 */
async function load(baseUrl: string): Promise<AppHarvest> {
  const all: bigint[] = [];
  const routes = { get: 0, ids: 0, range: 0 };
  let next = 0;
  const perConnection = await Promise.all(
    Array.from({ length: CONNECTIONS_PER_APP }, async () => {
      const client = new HttpClient(baseUrl, 1);
      const sequence: bigint[] = [];
      try {
        while (next < REQUESTS_PER_APP) {
          const index = next++;
          const kind = (['get', 'ids', 'range'] as const)[index % 3];
          routes[kind]++;
          if (kind === 'get') {
            const answer = await client.send(`/api/segment/get/${TAG}`);
            expect({ status: answer.status, body: answer.body }).toEqual({
              status: 200,
              body: expect.stringMatching(/^\d+$/),
            });
            sequence.push(BigInt(answer.body));
            all.push(BigInt(answer.body));
          } else if (kind === 'ids') {
            const answer = await client.send(`/api/segment/ids/${TAG}?count=7`);
            expect(answer.status).toBe(200);
            const ids = (JSON.parse(answer.body) as { ids: string[] }).ids.map(BigInt);
            expect(ids).toHaveLength(7);
            sequence.push(...ids);
            all.push(...ids);
          } else {
            const answer = await client.send(`/api/segment/range/${TAG}?count=5`);
            expect(answer.status).toBe(200);
            const { start, end } = JSON.parse(answer.body) as { start: string; end: string };
            expect(BigInt(end) - BigInt(start)).toBe(5n);
            for (let id = BigInt(start); id < BigInt(end); id++) all.push(id);
          }
        }
      } finally {
        client.close();
      }
      return sequence;
    }),
  );
  return { all, perConnection, routes };
}

function expectStrictlyIncreasing(ids: bigint[]): void {
  for (let i = 1; i < ids.length; i++) {
    if (ids[i] <= ids[i - 1]) {
      throw new Error(`not strictly increasing at ${i}: ${ids[i - 1]} then ${ids[i]}`);
    }
  }
}

/** Range loads the app has made for `tag`, from `/cache` as JSON. */
async function loadsOf(client: HttpClient, tag: string): Promise<number> {
  const answer = await client.send('/cache', { headers: { accept: 'application/json' } });
  expect(answer.status).toBe(200);
  const snapshot = JSON.parse(answer.body) as { buffers: Array<{ tag: string; loads: number }> };
  return snapshot.buffers.find((buffer) => buffer.tag === tag)?.loads ?? 0;
}

describeWithServices(['mysql'], 'two applications sharing one MariaDB database', () => {
  let db: TestDatabase;
  const states: Array<ReturnType<typeof tempDir>> = [];
  let appA: NestFastifyApplication | undefined;
  let appB: NestFastifyApplication | undefined;

  const envFor = (): Record<string, string> => {
    const state = tempDir('leaf-two-apps');
    states.push(state);
    return {
      LEAF_DB_URL: db.url,
      LEAF_DB_MIGRATE: 'true',
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_STATE_DIR: state.path,
    };
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    // A creates the schema; B starts on it (its migration run finds nothing to do).
    appA = await startApp(envFor(), { listen: true });
    // A small step: ranges rotate all the time and the two apps interleave on the row lock.
    await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 10)', [TAG]);
    await appA.get(SegmentService).refreshTags();
    appB = await startApp(envFor(), { listen: true });
  });

  afterAll(async () => {
    await appA?.close();
    await appB?.close();
    await db?.drop();
    for (const state of states) state.remove();
  });

  it(`issues no duplicate across ${2 * REQUESTS_PER_APP} concurrent requests, monotonic per app and connection`, async () => {
    const urlA = HttpClient.baseUrlOf(appA!);
    const urlB = HttpClient.baseUrlOf(appB!);
    const [a, b] = await Promise.all([load(urlA), load(urlB)]);

    for (const harvest of [a, b]) {
      expect(harvest.routes.get + harvest.routes.ids + harvest.routes.range).toBe(REQUESTS_PER_APP);
      expect(harvest.all).toHaveLength(
        harvest.routes.get + 7 * harvest.routes.ids + 5 * harvest.routes.range,
      );
      // On one connection the requests are sequential, so an instance's buffer order shows.
      for (const sequence of harvest.perConnection) expectStrictlyIncreasing(sequence);
    }

    const everything = [...a.all, ...b.all];
    const unique = new Set(everything);
    if (unique.size !== everything.length) {
      const seen = new Set<bigint>();
      const duplicates = everything.filter((id) => (seen.has(id) ? true : (seen.add(id), false)));
      throw new Error(
        `${everything.length - unique.size} duplicate ID(s), e.g. ${duplicates.slice(0, 5).join(', ')}`,
      );
    }

    // Every ID lies below the table's max_id, and the two apps really interleaved.
    const maxId = BigInt((await db.maxId(TAG))!);
    const max = (ids: bigint[]): bigint => ids.reduce((x, y) => (x > y ? x : y));
    const min = (ids: bigint[]): bigint => ids.reduce((x, y) => (x < y ? x : y));
    expect(max(everything)).toBeLessThan(maxId);
    expect(min(everything)).toBeGreaterThanOrEqual(1n);
    expect(min(b.all)).toBeLessThan(max(a.all));
    expect(min(a.all)).toBeLessThan(max(b.all));

    const probeA = new HttpClient(urlA, 1);
    const probeB = new HttpClient(urlB, 1);
    try {
      expect(await loadsOf(probeA, TAG)).toBeGreaterThanOrEqual(5);
      expect(await loadsOf(probeB, TAG)).toBeGreaterThanOrEqual(5);
    } finally {
      probeA.close();
      probeB.close();
    }
    // 4,000 requests and two apps in this process: CPU-bound, and the suites run in parallel.
  }, 90_000);

  it('closing one application leaves the other serving, refreshing and allocating', async () => {
    const urlA = HttpClient.baseUrlOf(appA!);
    const clientB = new HttpClient(HttpClient.baseUrlOf(appB!), 1);
    const clientA = new HttpClient(urlA, 1);
    try {
      const before = BigInt((await clientB.send(`/api/segment/get/${TAG}`)).body);

      await appA!.close();
      appA = undefined;
      await expect(clientA.send(`/api/segment/get/${TAG}`)).rejects.toThrow(
        /ECONNREFUSED|ECONNRESET|socket hang up/,
      );

      const after = await clientB.send(`/api/segment/get/${TAG}`);
      expect(after.status).toBe(200);
      expect(BigInt(after.body)).toBeGreaterThan(before);
      expect((await clientB.send('/health/ready')).status).toBe(200);
      expect(
        appB!.get(SchedulerRegistry).doesExist('interval', LEAF_JOB_NAMES.segmentRefresh('leaf')),
      ).toBe(true);

      // B's database connection and tag refresh still work: a new tag is seen and allocated.
      await db.query(
        "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('after-close', 1, 10)",
      );
      await appB!.get(SegmentService).refreshTags();
      expect((await clientB.send('/api/segment/get/after-close')).body).toBe('1');
      const range = JSON.parse(
        (await clientB.send('/api/segment/range/after-close?count=500')).body,
      ) as {
        start: string;
        end: string;
      };
      expect(BigInt(range.end) - BigInt(range.start)).toBe(500n);
      expect(await db.maxId('after-close')).toBe(range.end);
    } finally {
      clientA.close();
      clientB.close();
    }
  });
});
