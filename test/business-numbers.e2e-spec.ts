/**
 * Business numbers end to end on MariaDB and on PostgreSQL (docs/formats.md, "Business numbers"):
 * formats defined through the admin API, numbers served by the routes of segment and sequence
 * mode (`PREFIX-date-000001` upward, the date the database's), a counter that outgrows its
 * width refused with 409 `LEAF_NUMBER_OVERFLOW`, the typed errors; and, in process, the
 * library across a midnight of the database's clock (shifted by an offset on the real
 * database): the next day's counter restarts at 1, once, in a row of its own.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { LeafModule } from 'nestjs-leaf';
import { BusinessNumberService } from 'nestjs-leaf/numbers';
import type { NumberFormatStore } from 'nestjs-leaf/ports';
import { LEAF_NUMBER_FORMAT_STORE } from '@app/leaf/nest/leaf.constants';
import { TypeormNumberFormatStore } from 'nestjs-leaf/storage/typeorm';
import { createApp } from '../src/bootstrap';
import { loadAppConfig } from '../src/config/app-config';
import { APP_DATA_SOURCES, type AppDataSources } from '../src/database/database.module';
import { runCli } from '../src/cli';
import { LeafClient, NumberFormatNotFoundError } from 'nestjs-leaf/client';
import { sparePort } from './system/harness/mariadb-server';
import { expectLeafError, tempDir, type InjectedAnswer } from './support/app';
import { SERVER_FLAVOURS, type ServerTestDatabase } from './support/server-databases';
import { describeWithServices } from './support/services';

jest.setTimeout(60_000);

const TOKEN = 'e2e-admin-token-0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(
  app: NestFastifyApplication,
  method: 'GET' | 'POST' | 'PATCH',
  url: string,
  body?: unknown,
): Promise<InjectedAnswer> {
  const res = await app
    .getHttpAdapter()
    .getInstance()
    .inject({
      method,
      url,
      headers: { ...AUTH, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  return { statusCode: res.statusCode, headers: res.headers, body: res.body };
}

/** The date `ms` has in `timeZone`, as `yyyyMMdd`. */
function dateIn(ms: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(ms);
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${part('year')}${part('month')}${part('day')}`;
}

/** The next instant at which `timeZone`'s date changes after `ms` (a minute-granular search). */
function nextMidnight(ms: number, timeZone: string): number {
  const today = dateIn(ms, timeZone);
  let at = ms - (ms % 60_000) + 60_000;
  while (dateIn(at, timeZone) === today) at += 60_000;
  return at;
}

/** The database's clock, shifted by `offsetMs`: a midnight of the database's clock, on demand. */
class ShiftedClockStore implements NumberFormatStore {
  offsetMs = 0;
  constructor(private readonly store: TypeormNumberFormatStore) {}
  listFormats = () => this.store.listFormats();
  findFormat = (tag: string) => this.store.findFormat(tag);
  createFormat: NumberFormatStore['createFormat'] = (format) => this.store.createFormat(format);
  updateFormat: NumberFormatStore['updateFormat'] = (tag, width, description) =>
    this.store.updateFormat(tag, width, description);
  async databaseNow(): Promise<number> {
    return (await this.store.databaseNow()) + this.offsetMs;
  }
}

for (const flavour of SERVER_FLAVOURS) {
  describeWithServices([flavour.service], `business numbers on ${flavour.label}`, () => {
    let db: ServerTestDatabase;
    let state: ReturnType<typeof tempDir>;
    /** Admin API, segment and sequence mode (elected in the database), listening. */
    let a: NestFastifyApplication;
    /** A second instance on the same database, segment mode only. */
    let b: NestFastifyApplication;
    let dbNow: () => Promise<number>;
    let port: number;

    beforeAll(async () => {
      db = await flavour.create({ migrate: true });
      state = tempDir('leaf-business-numbers');
      port = await sparePort();
      const env = {
        LEAF_DB_URL: db.url,
        LEAF_SNOWFLAKE_ENABLED: 'false',
        LEAF_STATE_DIR: state.path,
        LEAF_NAME: `bn${Date.now().toString(36)}`,
      };
      a = await createApp(
        loadAppConfig({
          ...env,
          PORT: String(port),
          LEAF_ADMIN_TOKEN: TOKEN,
          LEAF_SEQUENCE_ENABLED: 'true',
          LEAF_SEQUENCE_ADVERTISE: `http://127.0.0.1:${port}`,
          LEAF_SEQUENCE_GROUPS: '1',
        }),
        { logger: ['error', 'warn'] },
      );
      await a.listen(port, '127.0.0.1');
      b = await createApp(loadAppConfig(env), { logger: ['error', 'warn'] });
      await b.init();
      await b.getHttpAdapter().getInstance().ready();
      const store = new TypeormNumberFormatStore(
        a.get<AppDataSources>(APP_DATA_SOURCES).dataSource!,
      );
      dbNow = () => store.databaseNow();
    });

    afterAll(async () => {
      await Promise.all([a?.close(), b?.close()]);
      await db?.drop();
      state?.remove();
    });

    it('defines formats through the admin API, defaults filled, refusing what could repeat a number', async () => {
      expect(
        (await call(a, 'POST', '/admin/tags', { biz_tag: 'orders', step: 100 })).statusCode,
      ).toBe(201);
      const created = await call(a, 'POST', '/admin/formats', {
        biz_tag: 'orders',
        prefix: 'ORD',
        date_pattern: 'yyyyMMdd',
        time_zone: 'Asia/Shanghai',
        width: 6,
      });
      expect(created.statusCode).toBe(201);
      expect(JSON.parse(created.body)).toEqual({
        biz_tag: 'orders',
        mode: 'segment',
        prefix: 'ORD',
        separator: '-',
        date_pattern: 'yyyyMMdd',
        time_zone: 'Asia/Shanghai',
        width: 6,
        reset: 'day',
        description: null,
      });
      expectLeafError(
        await call(a, 'POST', '/admin/formats', { biz_tag: 'orders', width: 4 }),
        409,
        'LEAF_NUMBER_FORMAT_EXISTS',
      );
      expectLeafError(
        await call(a, 'POST', '/admin/formats', { biz_tag: 'nope', width: 4 }),
        404,
        'LEAF_TAG_NOT_FOUND',
      );
      const badZone = expectLeafError(
        await call(a, 'POST', '/admin/formats', {
          biz_tag: 'orders',
          width: 4,
          time_zone: 'Mars/Base',
        }),
        400,
        'LEAF_INVALID_ARGUMENT',
      );
      expect(badZone.message).toContain('Mars/Base');
      expectLeafError(
        await call(a, 'POST', '/admin/formats', {
          biz_tag: 'orders',
          width: 4,
          date_pattern: 'yyyyMM',
          reset: 'day',
        }),
        400,
        'LEAF_INVALID_ARGUMENT',
      );
      expectLeafError(
        await call(a, 'PATCH', '/admin/formats/orders', { prefix: 'X' }),
        400,
        'LEAF_INVALID_ARGUMENT',
      );
      expectLeafError(
        await call(a, 'PATCH', '/admin/formats/orders', { width: 5 }),
        400,
        'LEAF_INVALID_ARGUMENT',
      );
      expectLeafError(
        await call(a, 'GET', '/admin/formats/nope'),
        404,
        'LEAF_NUMBER_FORMAT_NOT_FOUND',
      );
    });

    it("serves PREFIX-date-000001 upward on the database's date, plain text and JSON", async () => {
      const before = await dbNow();
      const first = await call(a, 'GET', '/api/segment/number/orders');
      expect(first.statusCode).toBe(200);
      expect(String(first.headers['content-type'])).toMatch(/^text\/plain/);
      const [, date] = /^ORD-(\d{8})-000001$/.exec(first.body) ?? [];
      expect(date).toBeDefined();
      // The database's date in Shanghai when asked (or the next one, asked on its midnight).
      expect([dateIn(before, 'Asia/Shanghai'), dateIn(before + 5000, 'Asia/Shanghai')]).toContain(
        date,
      );
      expect((await call(a, 'GET', '/api/segment/number/orders')).body).toBe(`ORD-${date}-000002`);
      const batch = await call(a, 'GET', '/api/segment/numbers/orders?count=3');
      expect(JSON.parse(batch.body)).toEqual({
        key: 'orders',
        numbers: [`ORD-${date}-000003`, `ORD-${date}-000004`, `ORD-${date}-000005`],
      });
      // Another instance agrees on the day and takes the next range of the same counter.
      expect((await call(b, 'GET', '/api/segment/number/orders')).body).toBe(`ORD-${date}-000101`);
      const shown = JSON.parse((await call(a, 'GET', '/admin/formats/orders')).body) as Record<
        string,
        string
      >;
      expect(shown).toMatchObject({ current_period: date, counter_tag: `orders:${date}` });
      expect(await db.maxId(`orders:${date}`)).toBe('201');

      const decoded = await call(a, 'GET', `/api/number/decode/orders?number=ORD-${date}-000004`);
      expect(JSON.parse(decoded.body)).toEqual({
        tag: 'orders',
        mode: 'segment',
        period: date,
        counterTag: `orders:${date}`,
        counter: '4',
      });
      expectLeafError(
        await call(a, 'GET', '/api/number/decode/orders?number=ORD-1-2'),
        400,
        'LEAF_INVALID_ARGUMENT',
      );
      expectLeafError(
        await call(a, 'GET', '/api/segment/number/nope'),
        404,
        'LEAF_NUMBER_FORMAT_NOT_FOUND',
      );
      expectLeafError(
        await call(a, 'GET', '/api/sequence/number/orders'),
        400,
        'LEAF_INVALID_ARGUMENT',
      );
    });

    it('serves a sequence format in order through sequence mode', async () => {
      await call(a, 'POST', '/admin/tags', { biz_tag: 'ledger', step: 10 });
      const created = await call(a, 'POST', '/admin/formats', {
        biz_tag: 'ledger',
        mode: 'sequence',
        prefix: 'L',
        separator: '',
        date_pattern: 'yyyy',
        time_zone: 'UTC',
        width: 8,
      });
      expect(JSON.parse(created.body)).toMatchObject({ reset: 'year', mode: 'sequence' });
      const year = dateIn(await dbNow(), 'UTC').slice(0, 4);
      let answer: InjectedAnswer | null = null;
      for (let i = 0; i < 100; i++) {
        answer = await call(a, 'GET', '/api/sequence/number/ledger');
        if (answer.statusCode === 200) break;
        await sleep(100); // the first election
      }
      expect(answer!.body).toBe(`L${year}00000001`);
      expect(
        JSON.parse((await call(a, 'GET', '/api/sequence/numbers/ledger?count=2')).body),
      ).toEqual({
        key: 'ledger',
        numbers: [`L${year}00000002`, `L${year}00000003`],
      });
      expectLeafError(
        await call(a, 'GET', '/api/segment/number/ledger'),
        400,
        'LEAF_INVALID_ARGUMENT',
      );
    });

    it('refuses a counter that outgrows its width with 409 LEAF_NUMBER_OVERFLOW, until widened', async () => {
      await call(a, 'POST', '/admin/tags', { biz_tag: 'tiny', step: 5 });
      await call(a, 'POST', '/admin/formats', {
        biz_tag: 'tiny',
        prefix: 'T',
        separator: '',
        width: 1,
      });
      const nine = JSON.parse((await call(a, 'GET', '/api/segment/numbers/tiny?count=9')).body) as {
        numbers: string[];
      };
      expect(nine.numbers).toEqual(['T1', 'T2', 'T3', 'T4', 'T5', 'T6', 'T7', 'T8', 'T9']);
      expectLeafError(
        await call(a, 'GET', '/api/segment/number/tiny'),
        409,
        'LEAF_NUMBER_OVERFLOW',
      );
      expectLeafError(
        await call(a, 'GET', '/api/segment/number/tiny'),
        409,
        'LEAF_NUMBER_OVERFLOW',
      );
      const widened = await call(a, 'PATCH', '/admin/formats/tiny', { width: 2 });
      expect(JSON.parse(widened.body)).toMatchObject({ width: 2 });
      // Two counters were refused (never printed): the next one is 12.
      expect((await call(a, 'GET', '/api/segment/number/tiny')).body).toBe('T12');
      const list = JSON.parse((await call(a, 'GET', '/admin/formats')).body) as {
        formats: Array<{ biz_tag: string }>;
      };
      expect(list.formats.map((f) => f.biz_tag)).toEqual(
        expect.arrayContaining(['ledger', 'orders', 'tiny']),
      );
    });

    it('serves the remote client, with typed errors', async () => {
      const client = new LeafClient({ servers: [`http://127.0.0.1:${port}`] });
      try {
        const [first, second] = await client.businessNumbers('segment', 'orders', 2);
        expect(first).toMatch(/^ORD-\d{8}-\d{6}$/);
        expect(second! > first!).toBe(true);
        expect(await client.businessNumbers('sequence', 'ledger')).toEqual([
          expect.stringMatching(/^L\d{4}\d{8}$/),
        ]);
        await expect(client.businessNumbers('segment', 'nope')).rejects.toBeInstanceOf(
          NumberFormatNotFoundError,
        );
        await expect(client.businessNumbers('segment', 'ledger')).rejects.toMatchObject({
          code: 'LEAF_INVALID_ARGUMENT',
        });
      } finally {
        await client.close();
      }
    });

    it('administers formats through the CLI, served at once by a running instance', async () => {
      const lines = { out: '', err: '' };
      const cli = async (...args: string[]) => {
        lines.out = '';
        lines.err = '';
        return runCli(args, {
          env: { LEAF_DB_URL: db.url },
          out: (text) => (lines.out += `${text}\n`),
          err: (text) => (lines.err += `${text}\n`),
        });
      };
      expect(await cli('tags', 'create', 'permits', '--step', '50')).toBe(0);
      expect(
        await cli(
          'formats',
          'create',
          'permits',
          '--prefix',
          'PR',
          '--separator',
          '',
          '--date-pattern',
          'yyyyMM',
          '--time-zone',
          'Europe/Berlin',
          '--width',
          '5',
          '--json',
        ),
      ).toBe(0);
      expect(JSON.parse(lines.out)).toEqual([
        expect.objectContaining({ biz_tag: 'permits', date_pattern: 'yyyyMM', reset: 'month' }),
      ]);
      const month = dateIn(await dbNow(), 'Europe/Berlin').slice(0, 6);
      expect((await call(b, 'GET', '/api/segment/number/permits')).body).toBe(`PR${month}00001`);
      expect(await cli('formats', 'update', 'permits', '--width', '7')).toBe(0);
      expect(lines.out).toMatch(
        /permits\s+segment\s+PR\s+""\s+yyyyMM\s+Europe\/Berlin\s+7\s+month/,
      );
      expect(await cli('formats', 'decode', 'permits', `PR${month}0000001`, '--json')).toBe(0);
      expect(JSON.parse(lines.out)).toMatchObject({ period: month, counter: '1' });
      expect(await cli('formats', 'update', 'permits', '--width', '6')).toBe(1);
      expect(lines.err).toContain('[LEAF_INVALID_ARGUMENT]');
      expect(await cli('formats', 'create', 'permits', '--width', '5')).toBe(1);
      expect(lines.err).toContain('[LEAF_NUMBER_FORMAT_EXISTS]');
      expect(await cli('formats', 'show', 'nope')).toBe(1);
      expect(lines.err).toContain('[LEAF_NUMBER_FORMAT_NOT_FOUND]');
      expect(await cli('formats', 'create', 'permits')).toBe(2);
      expect(await cli('formats', 'list')).toBe(0);
      expect(lines.out.split('\n')[0]).toMatch(/^biz_tag\s+mode\s+prefix/);
    });

    describe('in process, across a midnight of the database', () => {
      let dataSource: DataSource;
      let shifted: ShiftedClockStore;
      const modules: TestingModule[] = [];

      async function instance(): Promise<BusinessNumberService> {
        const moduleRef = await Test.createTestingModule({
          imports: [ScheduleModule.forRoot(), LeafModule.forRoot({ segment: { dataSource } })],
        })
          .overrideProvider(LEAF_NUMBER_FORMAT_STORE)
          .useValue(shifted)
          .compile();
        modules.push(await moduleRef.init());
        return moduleRef.get(BusinessNumberService);
      }

      beforeAll(async () => {
        dataSource = await db.openDataSource();
        shifted = new ShiftedClockStore(new TypeormNumberFormatStore(dataSource));
      });

      afterAll(async () => {
        for (const moduleRef of modules) await moduleRef.close();
        await dataSource?.destroy();
      });

      it('restarts the counter at 1 once in the new day, in a row of its own; never runs across', async () => {
        await dataSource.query(
          "INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('invoices', 1, 1000)",
        );
        const first = await instance();
        await first.defineFormat({
          tag: 'invoices',
          prefix: 'INV',
          datePattern: 'yyyyMMdd',
          timeZone: 'America/New_York',
          width: 6,
        });
        // The database's clock 1.5 s before New York's next midnight.
        const real = await shifted.databaseNow();
        const midnight = nextMidnight(real, 'America/New_York');
        shifted.offsetMs = midnight - 1500 - real;
        const today = dateIn(midnight - 1, 'America/New_York');
        const tomorrow = dateIn(midnight, 'America/New_York');

        // Across the midnight, stopping at 50 numbers of the new day: a tenth of its range taken
        // would start the next range's preload, and the second instance would then skip it.
        const numbers: string[] = [];
        const until = Date.now() + 6000;
        let newDay = 0;
        while (Date.now() < until && newDay < 50) {
          const number = await first.next('invoices');
          numbers.push(number);
          if (number.startsWith(`INV-${tomorrow}-`)) newDay++;
          await sleep(20);
        }
        const second = await instance();
        numbers.push(await second.next('invoices'));
        // A batch of the mode named answers in the new period too.
        const [batched] = await second.nextBatchOf('segment', 'invoices', 1);
        expect(batched).toBe(`INV-${tomorrow}-001002`);

        const before = numbers.filter((n) => n.startsWith(`INV-${today}-`));
        const after = numbers.filter((n) => n.startsWith(`INV-${tomorrow}-`));
        expect(before.length + after.length).toBe(numbers.length);
        expect(before.length).toBeGreaterThan(10);
        expect(after.length).toBeGreaterThan(10);
        // In order: every number of the day before every number of the next one.
        expect(numbers).toEqual([...before, ...after]);
        expect(before.slice(0, 3)).toEqual([
          `INV-${today}-000001`,
          `INV-${today}-000002`,
          `INV-${today}-000003`,
        ]);
        expect(after[0]).toBe(`INV-${tomorrow}-000001`);
        // The second instance took the next range of tomorrow's counter: no second restart.
        expect(after.at(-1)).toBe(`INV-${tomorrow}-001001`);
        expect(new Set([...numbers, batched]).size).toBe(numbers.length + 1);
        expect(await db.maxId(`invoices:${today}`)).toBe('1001');
        expect(await db.maxId(`invoices:${tomorrow}`)).toBe('2001');
        expect(await db.maxId('invoices')).toBe('1');
      });
    });
  });
}
