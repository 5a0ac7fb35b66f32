/**
 * The database-held sequence election on real MariaDB and PostgreSQL (docs/design.md,
 * "Sequence mode on the database"): the issuer row's claim, renewal, expiry on the database's
 * clock and resignation (TypeormSequenceIssuerStore), and the fence of the allocation stores —
 * a range is granted with the group's current term only, and a claim waits for an allocation
 * that holds the row's shared lock.
 */
import type { DataSource } from 'typeorm';
import { createLeafAllocStore, TypeormSequenceIssuerStore } from 'nestjs-leaf/storage/typeorm';
import { SequenceFencedError } from 'nestjs-leaf/errors';
import type { IssuerFence, LeafAllocStore } from 'nestjs-leaf/ports';
import { createTestDatabase } from './support/test-database';
import { createPostgresTestDatabase } from './support/postgres-database';
import { describeWithServices } from './support/services';

jest.setTimeout(30_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Engine {
  readonly service: 'mysql' | 'postgres';
  open(): Promise<{
    dataSource: DataSource;
    /** Runs `first` in a transaction on a raw session, then `during` while it is open, then commits. */
    holding(first: string, params: unknown[], during: () => Promise<void>): Promise<void>;
    drop(): Promise<void>;
  }>;
  readonly fenceSql: string;
}

const engines: Engine[] = [
  {
    service: 'mysql',
    fenceSql:
      'SELECT term FROM leaf_sequence_issuer WHERE name = ? AND group_id = ? LOCK IN SHARE MODE',
    async open() {
      const db = await createTestDatabase({ migrate: true });
      const dataSource = await db.openDataSource();
      return {
        dataSource,
        async holding(first, params, during) {
          const session = await db.connect();
          try {
            await session.query('START TRANSACTION');
            await session.query(first, params);
            await during();
            await session.query('COMMIT');
          } finally {
            await session.end();
          }
        },
        async drop() {
          await dataSource.destroy();
          await db.drop();
        },
      };
    },
  },
  {
    service: 'postgres',
    fenceSql: 'SELECT term FROM leaf_sequence_issuer WHERE name = $1 AND group_id = $2 FOR SHARE',
    async open() {
      const db = await createPostgresTestDatabase({ migrate: true });
      const dataSource = await db.openDataSource();
      return {
        dataSource,
        async holding(first, params, during) {
          const session = await db.connect();
          try {
            await session.query('BEGIN');
            await session.query(first, params);
            await during();
            await session.query('COMMIT');
          } finally {
            await session.end();
          }
        },
        async drop() {
          await dataSource.destroy();
          await db.drop();
        },
      };
    },
  },
];

for (const engine of engines) {
  describeWithServices([engine.service], `sequence issuer rows on ${engine.service}`, () => {
    let env: Awaited<ReturnType<Engine['open']>>;
    let issuers: TypeormSequenceIssuerStore;
    let alloc: LeafAllocStore;
    let group = 0;
    /** A group of its own for each test, its row read once (created free), as a round does. */
    const nextGroup = async () => {
      const g = ++group;
      await issuers.read('leaf', g);
      return g;
    };

    beforeAll(async () => {
      env = await engine.open();
      issuers = new TypeormSequenceIssuerStore(env.dataSource);
      alloc = createLeafAllocStore(env.dataSource);
      await alloc.createTag({ tag: 'k', step: 10 });
    });
    afterAll(async () => {
      await env?.drop();
    });

    it('a missing row is created free (term 0, expired); one claim of it wins, a second with the same seen term does not', async () => {
      const g = await nextGroup();
      const row = await issuers.read('leaf', g);
      expect(row).toEqual({ holder: null, address: null, term: 0n, expired: true });
      const claim = { holder: 'a', address: 'http://a', seenTerm: 0n, leaseMs: 10_000 };
      expect(await issuers.claim('leaf', g, claim)).toBe(1n);
      expect(await issuers.claim('leaf', g, { ...claim, holder: 'b' })).toBeNull();
      // Not expired: a claim at the current term is refused too.
      expect(await issuers.claim('leaf', g, { ...claim, holder: 'b', seenTerm: 1n })).toBeNull();
      expect(await issuers.read('leaf', g)).toEqual({
        holder: 'a',
        address: 'http://a',
        term: 1n,
        expired: false,
      });
    });

    it('renewals need the holder and its term; the row expires on the database clock, then another claims it at term + 1 and the old holder can no longer renew', async () => {
      const g = await nextGroup();
      expect(
        await issuers.claim('leaf', g, { holder: 'a', address: 'x', seenTerm: 0n, leaseMs: 400 }),
      ).toBe(1n);
      expect(await issuers.renew('leaf', g, 'a', 1n, 400)).toBe(true);
      expect(await issuers.renew('leaf', g, 'a', 0n, 400)).toBe(false);
      expect(await issuers.renew('leaf', g, 'b', 1n, 400)).toBe(false);
      expect((await issuers.read('leaf', g)).expired).toBe(false);
      await sleep(500);
      const expired = await issuers.read('leaf', g);
      expect(expired).toMatchObject({ holder: 'a', term: 1n, expired: true });
      expect(
        await issuers.claim('leaf', g, {
          holder: 'b',
          address: 'y',
          seenTerm: 1n,
          leaseMs: 10_000,
        }),
      ).toBe(2n);
      expect(await issuers.renew('leaf', g, 'a', 1n, 400)).toBe(false);
      expect(await issuers.read('leaf', g)).toMatchObject({ holder: 'b', address: 'y', term: 2n });
    });

    it('resigning expires the row at once, only for its own term', async () => {
      const g = await nextGroup();
      await issuers.claim('leaf', g, { holder: 'a', address: 'x', seenTerm: 0n, leaseMs: 60_000 });
      expect(await issuers.resign('leaf', g, 'a', 0n)).toBe(false);
      expect((await issuers.read('leaf', g)).expired).toBe(false);
      expect(await issuers.resign('leaf', g, 'a', 1n)).toBe(true);
      await sleep(2); // one database millisecond
      expect((await issuers.read('leaf', g)).expired).toBe(true);
      expect(
        await issuers.claim('leaf', g, {
          holder: 'b',
          address: 'y',
          seenTerm: 1n,
          leaseMs: 60_000,
        }),
      ).toBe(2n);
    });

    it('an allocation fenced with the current term is granted; with a stale term it is refused with SequenceFencedError and max_id stays', async () => {
      const g = await nextGroup();
      await issuers.claim('leaf', g, { holder: 'a', address: 'x', seenTerm: 0n, leaseMs: 60_000 });
      const fence: IssuerFence = { name: 'leaf', group: g, holder: 'a', term: 1n };
      const granted = await alloc.allocate('k', undefined, fence);
      expect(granted.tag).toBe('k');
      await issuers.resign('leaf', g, 'a', 1n);
      await sleep(2);
      await issuers.claim('leaf', g, { holder: 'b', address: 'y', seenTerm: 1n, leaseMs: 60_000 });
      const refused = await alloc.allocate('k', undefined, fence).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(SequenceFencedError);
      expect(refused).toMatchObject({ code: 'LEAF_SEQUENCE_FENCED', group: g, term: '1' });
      expect((await alloc.findTag('k'))!.maxId).toBe(granted.maxId);
      // The right holder with the new term; a fence of a group without a row is refused too.
      const next = await alloc.allocate('k', undefined, { ...fence, holder: 'b', term: 2n });
      expect(next.maxId).toBe(granted.maxId + 10n);
      await expect(
        alloc.allocate('k', undefined, { ...fence, group: 999_999 }),
      ).rejects.toBeInstanceOf(SequenceFencedError);
      // Segment mode's calls pass no fence.
      expect((await alloc.allocate('k')).maxId).toBe(granted.maxId + 20n);
    });

    it('a claim waits for an allocation that holds the row’s shared lock, so no range is committed to a term after the next was claimed', async () => {
      const g = await nextGroup();
      await issuers.claim('leaf', g, { holder: 'a', address: 'x', seenTerm: 0n, leaseMs: 300 });
      await sleep(400);
      let claimed: bigint | null | undefined;
      await env.holding(engine.fenceSql, ['leaf', g], async () => {
        const claim = issuers
          .claim('leaf', g, { holder: 'b', address: 'y', seenTerm: 1n, leaseMs: 60_000 })
          .then((term) => (claimed = term));
        await sleep(500);
        expect(claimed).toBeUndefined();
        void claim;
      });
      for (let i = 0; i < 50 && claimed === undefined; i++) await sleep(20);
      expect(claimed).toBe(2n);
    });
  });
}
