/**
 * IDs for a time (docs/snowflake.md, "IDs for a time") through the application built as
 * `main.ts` builds it (embedded worker ID, no ZooKeeper): `GET /api/snowflake/bounds` checked
 * against IDs and UUIDv7 the same app issued and its own decode route, its refusals at the door,
 * and the remote client's `snowflakeBounds` over real HTTP with the errors rebuilt; with
 * snowflake mode off, 404 (a malformed time still 400).
 */
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from 'nestjs-leaf';
import {
  InvalidArgumentError,
  LeafClient,
  ModeDisabledError,
  TimeBeforeEpochError,
  TimeBeyondLayoutError,
} from 'nestjs-leaf/client';
import { snowflakeTimeBounds } from 'nestjs-leaf/formats';
import { expectLeafError, expectNoStackTrace, inject, startApp, tempDir } from './support/app';
import { HttpClient } from './support/http-client';
import type { SnowflakeBoundsAnswer as BoundsAnswer } from '../src/id/snowflake.controller';

const WORKER_ID = 9;
const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);

describe('GET /api/snowflake/bounds and LeafClient.snowflakeBounds', () => {
  let dir: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    dir = tempDir('leaf-bounds');
    app = await startApp(
      {
        LEAF_SEGMENT_ENABLED: 'false',
        LEAF_STATE_DIR: dir.path,
        LEAF_WORKER_ID: String(WORKER_ID),
        LEAF_MAX_BATCH: '1000',
      },
      { listen: true },
    );
  });

  afterAll(async () => {
    await app?.close();
    dir?.remove();
  });

  async function bounds(query: string): Promise<BoundsAnswer> {
    const answer = await inject(app, `/api/snowflake/bounds?${query}`);
    expect({ query, status: answer.statusCode }).toEqual({ query, status: 200 });
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    return JSON.parse(answer.body) as BoundsAnswer;
  }

  it('holds every ID and UUIDv7 the app issued in the interval, as its decode route reads them, and none outside', async () => {
    const t1 = Date.now();
    const ids: bigint[] = [];
    const uuids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const batch = JSON.parse((await inject(app, '/api/snowflake/ids/o?count=1000')).body) as {
        ids: string[];
      };
      ids.push(...batch.ids.map(BigInt));
      const texts = JSON.parse((await inject(app, '/api/snowflake/uuids/o?count=200')).body) as {
        uuids: string[];
      };
      uuids.push(...texts.uuids);
    }
    const t2 = Date.now();
    const inside = await bounds(`from=${t1}&to=${t2}`);
    expect(inside).toEqual({
      from: t1,
      to: t2,
      min: expect.stringMatching(/^[1-9]\d*$/),
      max: expect.stringMatching(/^[1-9]\d*$/),
      uuidMin: expect.stringMatching(/-7000-8000-000000000000$/),
      uuidMax: expect.stringMatching(/-7fff-bfff-ffffffffffff$/),
    });
    const [min, max] = [BigInt(inside.min), BigInt(inside.max)];
    for (const id of [ids[0]!, ids.at(-1)!, ids[2500]!]) {
      const decoded = JSON.parse(
        (await inject(app, `/decodeSnowflakeId?snowflakeId=${id}`)).body,
      ) as { timestampMs: string };
      expect(Number(decoded.timestampMs)).toBeGreaterThanOrEqual(t1);
      expect(Number(decoded.timestampMs)).toBeLessThanOrEqual(t2);
    }
    expect(ids.every((id) => id >= min && id <= max)).toBe(true);
    expect(uuids.every((uuid) => uuid >= inside.uuidMin && uuid <= inside.uuidMax)).toBe(true);
    // The milliseconds just before and after hold none of them.
    const before = await bounds(`from=${t1 - 1000}&to=${t1 - 1}`);
    const after = await bounds(`from=${t2 + 1}&to=${t2 + 1000}`);
    expect(BigInt(before.max) + 1n).toBe(min);
    expect(BigInt(after.min) - 1n).toBe(max);
    expect(ids.some((id) => id <= BigInt(before.max) || id >= BigInt(after.min))).toBe(false);
    expect(uuids.some((uuid) => uuid <= before.uuidMax || uuid >= after.uuidMin)).toBe(false);
  });

  it('takes ISO 8601 or ms, to defaulting to from; answers what the library computes with the layout', async () => {
    const march = Date.parse('2026-03-01T00:00:00Z');
    const april = Date.parse('2026-04-01T00:00:00Z');
    const expected = snowflakeTimeBounds(layout, march, april - 1);
    const answer = await bounds(
      `from=2026-03-01&to=${encodeURIComponent('2026-04-01T07:59:59.999+08:00')}`,
    );
    expect(answer).toEqual({
      ...expected,
      min: expected.min.toString(),
      max: expected.max.toString(),
    });
    expect(await bounds(`from=${march}&to=${april - 1}`)).toEqual(answer);
    expect(await bounds(`from=${march}`)).toMatchObject({
      from: march,
      to: march,
      min: answer.min,
    });
  });

  it('refuses at the door with 400 and a code: bad text, a reversed interval, times outside the layout', async () => {
    const cases: Array<[string, string]> = [
      ['', 'LEAF_INVALID_ARGUMENT'],
      ['from=', 'LEAF_INVALID_ARGUMENT'],
      ['from=1&from=2', 'LEAF_INVALID_ARGUMENT'],
      ['from=%00', 'LEAF_INVALID_ARGUMENT'],
      ['from=1.5', 'LEAF_INVALID_ARGUMENT'],
      ['from=99999999999999999', 'LEAF_INVALID_ARGUMENT'],
      [`from=${'9'.repeat(5000)}`, 'LEAF_INVALID_ARGUMENT'],
      ['from=2026-02-30', 'LEAF_INVALID_ARGUMENT'],
      ['from=2026-03-01T10:00', 'LEAF_INVALID_ARGUMENT'],
      ['from=now', 'LEAF_INVALID_ARGUMENT'],
      ['from=2026-03-02&to=2026-03-01', 'LEAF_INVALID_ARGUMENT'],
      ['from=2026-03-01&to=%ED%A0%80', 'LEAF_INVALID_ARGUMENT'],
      [`from=${DEFAULT_SNOWFLAKE_EPOCH - 1}`, 'LEAF_TIME_BEFORE_EPOCH'],
      ['from=-5&to=2026-01-01', 'LEAF_TIME_BEFORE_EPOCH'],
      [`from=2026-01-01&to=${layout.maxTimestamp + 1}`, 'LEAF_TIME_BEYOND_LAYOUT'],
    ];
    for (const [query, code] of cases) {
      const answer = await inject(app, `/api/snowflake/bounds?${query}`);
      expect({ query, status: answer.statusCode }).toEqual({ query, status: 400 });
      expectLeafError(answer, 400, code);
      expectNoStackTrace(answer.body);
    }
    // The last millisecond is still in the layout.
    expect(await bounds(`from=${layout.maxTimestamp}`)).toMatchObject({
      max: layout.maxId.toString(),
    });
  });

  it('the remote client: the same bounds as bigints, the errors as their classes, a bad end refused without a request', async () => {
    const client = new LeafClient({ servers: [HttpClient.baseUrlOf(app)] });
    try {
      const t = Date.parse('2026-03-01T00:00:00Z');
      const answer = await bounds(`from=${t}&to=${t + 999}`);
      const remote = await client.snowflakeBounds(new Date(t), t + 999);
      expect(remote).toEqual({ ...answer, min: BigInt(answer.min), max: BigInt(answer.max) });
      expect(await client.snowflakeBounds(t)).toEqual(snowflakeTimeBounds(layout, t));

      const early = await client
        .snowflakeBounds(DEFAULT_SNOWFLAKE_EPOCH - 1)
        .catch((e: unknown) => e);
      expect(early).toBeInstanceOf(TimeBeforeEpochError);
      expect(early).toMatchObject({
        code: 'LEAF_TIME_BEFORE_EPOCH',
        timestamp: DEFAULT_SNOWFLAKE_EPOCH - 1,
        epoch: DEFAULT_SNOWFLAKE_EPOCH,
      });
      const late = await client
        .snowflakeBounds(t, layout.maxTimestamp + 1)
        .catch((e: unknown) => e);
      expect(late).toBeInstanceOf(TimeBeyondLayoutError);
      expect(late).toMatchObject({
        timestamp: layout.maxTimestamp + 1,
        maxTimestamp: layout.maxTimestamp,
      });

      const sent = client.stats().snowflakeRequests;
      await expect(client.snowflakeBounds(t + 1, t)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(client.snowflakeBounds(1.5)).rejects.toMatchObject({
        code: 'LEAF_INVALID_ARGUMENT',
        argument: 'from',
      });
      expect(client.stats().snowflakeRequests).toBe(sent);
    } finally {
      await client.close();
    }
  });
});

describe('GET /api/snowflake/bounds with snowflake mode off', () => {
  let dir: ReturnType<typeof tempDir>;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    dir = tempDir('leaf-bounds-off');
    app = await startApp(
      {
        LEAF_DB_URL: `sqlite:${join(dir.path, 'leaf.sqlite')}`,
        LEAF_STATE_DIR: dir.path,
        LEAF_SNOWFLAKE_ENABLED: 'false',
      },
      { listen: true },
    );
  });

  afterAll(async () => {
    await app?.close();
    dir?.remove();
  });

  it('answers 404 LEAF_MODE_DISABLED (the client: ModeDisabledError); a malformed time is still 400', async () => {
    expectLeafError(
      await inject(app, '/api/snowflake/bounds?from=2026-03-01'),
      404,
      'LEAF_MODE_DISABLED',
    );
    expectLeafError(
      await inject(app, '/api/snowflake/bounds?from=soon'),
      400,
      'LEAF_INVALID_ARGUMENT',
    );
    const client = new LeafClient({ servers: [HttpClient.baseUrlOf(app)] });
    try {
      await expect(client.snowflakeBounds(Date.now())).rejects.toBeInstanceOf(ModeDisabledError);
    } finally {
      await client.close();
    }
  });
});
