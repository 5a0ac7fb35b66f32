/**
 * The ordering guarantee under mixed concurrent load on MariaDB (docs/design.md, "Ordering"):
 * two application instances on one database, each with concurrent callers mixing single
 * IDs, batches and ranges (many of them larger than what the segment has left, so they take
 * fresh allocations while preloads run). Every caller calls one instance in sequence, so the
 * instance's per-tag order shows up as an increasing sequence per caller; and every ID is
 * distinct across both instances.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { inject, startApp, tempDir } from './support/app';
import { describeWithServices } from './support/services';
import { createTestDatabase, type TestDatabase } from './support/test-database';

const CALLERS_PER_INSTANCE = 6;
const RUN_MS = 6000;
const TAGS = ['mixed-a', 'mixed-b'];

describeWithServices(['mysql'], 'segment ordering under mixed concurrent load on MariaDB', () => {
  let db: TestDatabase;
  let state: ReturnType<typeof tempDir>;
  const apps: NestFastifyApplication[] = [];

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: true });
    for (const tag of TAGS) {
      await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 40)', [tag]);
    }
    state = tempDir('leaf-ordering');
    for (let i = 0; i < 2; i++) {
      apps.push(
        await startApp({
          LEAF_DB_URL: db.url,
          LEAF_MAX_BATCH: '50',
          LEAF_MAX_RANGE: '500',
          LEAF_SNOWFLAKE_ENABLED: 'false',
          LEAF_ACCESS_LOG: 'false',
          // Ordering, not latency, is under test: with step 40 and ranges up to 200 nearly
          // every call waits on a row lock the other instance holds, and on a loaded CI
          // machine that wait passed the default 3 s (a 503 instead of an ID).
          LEAF_SEGMENT_LOAD_TIMEOUT_MS: '30000',
          LEAF_STATE_DIR: state.path,
        }),
      );
    }
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await db?.drop();
    state?.remove();
  });

  it('every caller sees increasing IDs and ranges per tag; every ID is distinct', async () => {
    const seen = new Map<string, Set<bigint>>(TAGS.map((tag) => [tag, new Set<bigint>()]));
    let inversions = 0;
    let duplicates = 0;
    const counts = { get: 0, ids: 0, range: 0 };
    const deadline = Date.now() + RUN_MS;

    // The body on failure says why (a 503's error code), not only that the status was wrong.
    const expectOk = (answer: { statusCode: number; body: string }) =>
      expect({ status: answer.statusCode, body: answer.body }).toMatchObject({ status: 200 });

    const caller = async (app: NestFastifyApplication, seed: number): Promise<void> => {
      let random = seed;
      const next = (n: number) => {
        random = (random * 1103515245 + 12345) % 2 ** 31;
        return random % n;
      };
      const last = new Map<string, bigint>();
      const record = (tag: string, low: bigint, high: bigint) => {
        if (low < (last.get(tag) ?? 0n)) inversions++;
        last.set(tag, high);
        const ids = seen.get(tag)!;
        for (let id = low; id < high; id++) {
          if (ids.has(id)) duplicates++;
          ids.add(id);
        }
      };
      for (let i = 0; i < 100_000 && Date.now() < deadline; i++) {
        const tag = TAGS[next(TAGS.length)];
        const kind = next(3);
        if (kind === 0) {
          const answer = await inject(app, `/api/segment/get/${tag}`);
          expectOk(answer);
          const id = BigInt(answer.body);
          record(tag, id, id + 1n);
          counts.get++;
        } else if (kind === 1) {
          const answer = await inject(app, `/api/segment/ids/${tag}?count=${1 + next(50)}`);
          expectOk(answer);
          for (const id of (JSON.parse(answer.body) as { ids: string[] }).ids) {
            record(tag, BigInt(id), BigInt(id) + 1n);
          }
          counts.ids++;
        } else {
          const answer = await inject(app, `/api/segment/range/${tag}?count=${1 + next(200)}`);
          expectOk(answer);
          const { start, end } = JSON.parse(answer.body) as { start: string; end: string };
          record(tag, BigInt(start), BigInt(end));
          counts.range++;
        }
      }
    };

    await Promise.all(
      apps.flatMap((app, a) =>
        Array.from({ length: CALLERS_PER_INSTANCE }, (_, c) => caller(app, 1 + a * 100 + c)),
      ),
    );
    expect(counts.range).toBeGreaterThan(100);
    expect(counts.get + counts.ids).toBeGreaterThan(200);
    expect({ inversions, duplicates }).toEqual({ inversions: 0, duplicates: 0 });
  }, 60_000);
});
