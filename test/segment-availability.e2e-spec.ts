/**
 * Running segment mode in production (real MariaDB; a TCP proxy in front of it "stops" the
 * database for one application without touching the shared server):
 * - the database down at start: the application starts, snowflake serves, segment answers
 *   503 LEAF_SEGMENT_NOT_INITIALIZED, and segment joins by itself once the database answers;
 * - readiness that leads: during a database cut it turns 503 while IDs are still served, and
 *   recovers with the database;
 * - the hand-back of unused IDs at a graceful stop (in-process and SIGTERM of a real
 *   process), and its refusal when another instance allocated since.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SegmentService } from 'nestjs-leaf';
import { AppProcess, killAllAppProcesses } from './support/app-process';
import { expectLeafError, inject, startApp, tempDir } from './support/app';
import { eventually } from '@app/leaf/testing/eventually';
import { describeWithServices } from './support/services';
import { TcpProxy } from './support/tcp-proxy';
import { createTestDatabase, type TestDatabase } from './support/test-database';

jest.setTimeout(60_000);

/** `LEAF_DB_URL` of `db` through `proxy`. */
function throughProxy(db: TestDatabase, proxy: TcpProxy): string {
  const url = new URL(db.url);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return url.toString();
}

/** The parts of a terminus answer the cases look at. */
interface Health {
  error: Record<string, { message?: string; allocationFailing?: boolean }>;
  details: Record<string, { message?: string; allocationFailing?: boolean }>;
}

async function readiness(app: NestFastifyApplication, route = '/health/ready/segment') {
  const answer = await inject(app, route);
  return { status: answer.statusCode, body: JSON.parse(answer.body) as Health };
}

describeWithServices(['mysql'], 'segment mode in production (MariaDB behind a proxy)', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  const state = tempDir('leaf-availability');

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: true });
    await db.query(
      "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('avail', 1, 1000), ('cut', 1, 1000)",
    );
    const { hostname, port } = new URL(db.url);
    proxy = new TcpProxy({ host: hostname, port: Number(port) || 3306 });
    await proxy.start();
  });

  afterAll(async () => {
    await killAllAppProcesses();
    await proxy?.stop();
    await db?.drop();
    state.remove();
  });

  it('starts with the database down: snowflake serves, segment 503 NOT_INITIALIZED, then joins without a restart', async () => {
    proxy.refuse(true);
    const app = await startApp({
      LEAF_DB_URL: throughProxy(db, proxy),
      LEAF_WORKER_ID: '7',
      LEAF_STATE_DIR: state.path,
      LEAF_SEGMENT_WARM_TAGS: 'avail',
    });
    try {
      const snowflake = await inject(app, '/api/snowflake/get/x');
      expect(snowflake.statusCode).toBe(200);
      expect(snowflake.body).toMatch(/^\d+$/);
      expectLeafError(
        await inject(app, '/api/segment/get/avail'),
        503,
        'LEAF_SEGMENT_NOT_INITIALIZED',
      );
      const segmentReady = await readiness(app);
      expect(segmentReady.status).toBe(503);
      expect(segmentReady.body.error.segment.message).toBe('tag list not loaded');
      expect((await readiness(app, '/health/ready/snowflake')).status).toBe(200);
      expect((await readiness(app, '/health/ready')).status).toBe(503);

      proxy.refuse(false);
      await eventually(async () => expect((await readiness(app)).status).toBe(200), 20_000, 200);
      // Joined: the warm tag is loaded as it joins (the warming may finish just after the tag
      // list made it ready), and it serves.
      await eventually(() =>
        expect(
          app
            .get(SegmentService)
            .snapshot()
            .buffers.find((b) => b.tag === 'avail'),
        ).toMatchObject({ initialized: true }),
      );
      const id = await inject(app, '/api/segment/get/avail');
      expect(id).toMatchObject({ statusCode: 200, body: '1' });
      expect((await readiness(app, '/health/ready')).status).toBe(200);
    } finally {
      proxy.refuse(false);
      await app.close();
    }
  });

  it('a misconfiguration still fails start-up (an unknown database)', async () => {
    const url = new URL(db.url);
    url.pathname = '/leaf_no_such_database';
    await expect(
      startApp({
        LEAF_DB_URL: url.toString(),
        LEAF_SNOWFLAKE_ENABLED: 'false',
        LEAF_STATE_DIR: state.path,
      }),
    ).rejects.toThrow(/Unknown database/i);
  });

  it('turns segment readiness 503 during a database cut while IDs are still served, then recovers', async () => {
    const app = await startApp({
      LEAF_DB_URL: throughProxy(db, proxy),
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_STATE_DIR: state.path,
      LEAF_SEGMENT_WARM_TAGS: 'cut',
      // One hour: any tag in use has less than that in memory once allocations fail.
      LEAF_SEGMENT_READINESS_RUNWAY_MS: '3600000',
    });
    let traffic = true;
    const served: string[] = [];
    // Light steady traffic, so the tag has an issue rate.
    const load = (async () => {
      while (traffic) {
        const answer = await inject(app, '/api/segment/get/cut');
        if (answer.statusCode === 200) served.push(answer.body);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    try {
      await eventually(async () => expect(served.length).toBeGreaterThan(20), 10_000);
      expect((await readiness(app)).status).toBe(200);

      proxy.refuse(true); // the database is gone for this application
      // The preload past 10 % of the segment fails: readiness goes down...
      const down = await (async () => {
        let last: Awaited<ReturnType<typeof readiness>> | undefined;
        await eventually(
          async () => {
            last = await readiness(app);
            expect(last.status).toBe(503);
          },
          20_000,
          100,
        );
        return last!;
      })();
      expect(down.body.error.segment.message).toMatch(
        /allocations failing .*runway below 3600000 ms: cut/,
      );
      expect(down.body.error.segment.allocationFailing).toBe(true);
      // ...while IDs are still served from memory.
      const during = await inject(app, '/api/segment/get/cut');
      expect(during.statusCode).toBe(200);

      proxy.refuse(false);
      await eventually(async () => expect((await readiness(app)).status).toBe(200), 20_000, 200);
      expect((await readiness(app)).body.details.segment.allocationFailing).toBe(false);
    } finally {
      traffic = false;
      await load;
      proxy.refuse(false);
      await app.close();
    }
    // Never an ID twice across the whole run.
    expect(new Set(served).size).toBe(served.length);
  });

  it('reports "shutting down" on readiness as soon as shutdown begins', async () => {
    const app = await startApp({
      LEAF_DB_URL: db.url,
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_STATE_DIR: state.path,
    });
    const segments = app.get(SegmentService);
    segments.onModuleDestroy();
    expect(segments.readiness()).toMatchObject({ ready: false, reason: 'shutting down' });
    await app.close();
  });
});

describeWithServices(['mysql'], 'hand-back of unused IDs at a graceful stop (MariaDB)', () => {
  let db: TestDatabase;
  const state = tempDir('leaf-hand-back');
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: true });
  });

  afterAll(async () => {
    await killAllAppProcesses();
    await db?.drop();
    state.remove();
  });

  async function newTag(step: number): Promise<string> {
    const tag = `hb-${++seq}`;
    await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, ?)', [tag, step]);
    return tag;
  }

  const env = () => ({
    LEAF_DB_URL: db.url,
    LEAF_SNOWFLAKE_ENABLED: 'false',
    LEAF_STATE_DIR: state.path,
  });

  async function take(app: NestFastifyApplication, tag: string, count: number): Promise<bigint[]> {
    const answer = await inject(app, `/api/segment/ids/${tag}?count=${count}`);
    expect(answer.statusCode).toBe(200);
    return (JSON.parse(answer.body) as { ids: string[] }).ids.map(BigInt);
  }

  it('hands back the unused tail: the next instance starts exactly there, no ID twice', async () => {
    const tag = await newTag(1000);
    const first = await startApp(env());
    const before = await take(first, tag, 10); // 1..10 of [1, 1001)
    expect(await db.maxId(tag)).toBe('1001');
    await first.close();
    expect(await db.maxId(tag)).toBe('11');

    const second = await startApp(env());
    const after = await take(second, tag, 10);
    await second.close();
    expect(after[0]).toBe(11n);
    const all = [...before, ...after];
    expect(new Set(all).size).toBe(all.length);
    expect(await db.maxId(tag)).toBe('21');
  });

  it('hands back the loaded next segment with the rest of the current one when they are contiguous', async () => {
    const tag = await newTag(100);
    const app = await startApp(env());
    const ids = await take(app, tag, 50); // past the 10 % mark: [101, 201) is preloaded
    await eventually(async () => expect(await db.maxId(tag)).toBe('201'));
    await eventually(() =>
      expect(
        app
          .get(SegmentService)
          .snapshot()
          .buffers.find((b) => b.tag === tag)?.next,
      ).not.toBeNull(),
    );
    await app.close();
    expect(ids[ids.length - 1]).toBe(50n);
    expect(await db.maxId(tag)).toBe('51');
  });

  it('refuses when another instance allocated after us: max_id stays where the other left it', async () => {
    const tag = await newTag(1000);
    const first = await startApp(env());
    const second = await startApp(env());
    const mine = await take(first, tag, 5); // first owns [1, 1001)
    const theirs = await take(second, tag, 5); // second owns [1001, 2001)
    expect(await db.maxId(tag)).toBe('2001');
    await first.close(); // its range is no longer the top: nothing changes
    expect(await db.maxId(tag)).toBe('2001');
    await second.close(); // the top one hands back
    expect(await db.maxId(tag)).toBe('1006');
    const third = await startApp(env());
    const next = await take(third, tag, 5);
    await third.close();
    expect(next[0]).toBe(1006n);
    const all = [...mine, ...theirs, ...next];
    expect(new Set(all).size).toBe(all.length);
  });

  it('never hands back a range given to a caller by the range route', async () => {
    const tag = await newTag(10);
    const app = await startApp(env());
    await take(app, tag, 2); // the buffer owns [1, 11), 1..2 issued
    // Larger than what the segment has left: allocated directly, owned by the caller.
    const range = await inject(app, `/api/segment/range/${tag}?count=50`);
    const { start, end } = JSON.parse(range.body) as { start: string; end: string };
    await app.close();
    // The caller's range is the top and stays allocated.
    expect(BigInt((await db.maxId(tag)) ?? 0)).toBeGreaterThanOrEqual(BigInt(end));
    expect(BigInt(start)).toBeGreaterThanOrEqual(11n);
  });

  it('a real process hands back on SIGTERM after answering its last request', async () => {
    const tag = await newTag(1000);
    const child = AppProcess.spawn({ ...env(), PORT: '0', HOST: '127.0.0.1' });
    const port = await child.listening();
    const answers: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/api/segment/get/${tag}`);
      answers.push(await res.text());
    }
    expect(answers).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    const exit = await child.stop('SIGTERM');
    // A graceful end: the app closes and the process exits 0 by itself.
    expect({ code: exit.code, signal: exit.signal, timedOut: exit.timedOut }).toEqual({
      code: 0,
      signal: null,
      timedOut: false,
    });
    expect(exit.stdout).toMatch(/Handed back 993 unused ID\(s\) of 1 tag\(s\)/);
    expect(await db.maxId(tag)).toBe('8');
  });
});
