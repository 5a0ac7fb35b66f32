import { AllocationError, IdOverflowError } from '../../core/errors/allocation.error';
import { InvalidArgumentError } from '../../core/errors/invalid-argument.error';
import { LeafError, LeafErrorCode } from '../../core/errors/leaf.error';
import { TagExistsError } from '../../core/errors/tag-exists.error';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import {
  MAX_INT64,
  type LeafAllocStore,
  type RangeGrant,
  type RangeJournalEntry,
} from '../../core/segment/leaf-alloc-store.port';
import { rangeOf, rejectionOf } from '../test-helpers';
import { globalContractRunner, harnessOnce, type ContractRunner } from './contract-runner';

/**
 * What {@link leafAllocStoreContract} needs of one implementation: the store, and direct
 * access to the storage behind it (not through the store) to seed rows and check what was
 * written.
 */
export interface LeafAllocStoreHarness {
  readonly store: LeafAllocStore;
  /** Inserts a row directly into the storage (`update_time` as the storage defaults it). */
  insert(row: {
    tag: string;
    maxId: bigint;
    step: number;
    description?: string | null;
  }): Promise<void>;
  /** `max_id` of `tag` read directly from the storage, exactly; `null` when there is no row. */
  maxId(tag: string): Promise<bigint | null>;
  /** Number of rows in the storage. */
  count(): Promise<number>;
  /** Deletes every row (runs before each case). */
  clear(): Promise<void>;
  /** Releases everything `open` acquired (runs once, after the last case). */
  close(): Promise<void>;
  /**
   * Direct access to the ID journal behind the store, when it keeps one (`grantOf`): its rows
   * of a tag, oldest first, and a way to make writing them fail (and to undo it).
   */
  readonly journal?: {
    rows(tag: string): Promise<Array<Omit<RangeGrant, 'grantedAt' | 'tag' | 'source'>>>;
    break(): Promise<void>;
    repair(): Promise<void>;
    /**
     * A store on the same storage whose allocations fail after the journal row was written,
     * before the commit (a high-water mark that cannot be written, say); absent when a store
     * has nothing that can fail there.
     */
    failingAfterJournal?: LeafAllocStore;
  };
}

/** An entry for the journal cases. */
const ENTRY: RangeJournalEntry = { mode: 'segment', instance: 'instance-a:8080', term: null };

const BEYOND_2_53 = (1n << 60n) + 7n;

/**
 * The behaviour every {@link LeafAllocStore} must have, as test cases (Jest's or Vitest's, {@link ContractRunner}): registers a
 * `describe` block named after `name`. `open` runs once (in `beforeAll`) and the table is
 * cleared before every case; tags are lower-case so that every database orders them alike.
 *
 * ```ts
 * leafAllocStoreContract('InMemoryAllocStore', async () => { ... return harness; });
 * ```
 *
 * Cases: allocation with the row's step and with a custom step (`appliedStep`/`baseStep`),
 * consecutive ranges contiguous; unknown tag → `TagNotFoundError` and no row created; a step
 * that is not a positive integer (argument or column) → `AllocationError`, `max_id`
 * unchanged; passing 2^63-1 → `IdOverflowError`, `max_id` unchanged, reaching it exactly is
 * allowed; `max_id` beyond 2^53 exact; 50 concurrent allocations → disjoint contiguous
 * ranges; tags independent; `listTags`/`listAll` (empty, every row, ordered by tag, exact);
 * `findTag` (a row exactly, `null` for none); `createTag` (defaults, `max_id` beyond 2^53
 * exact, duplicate → `TagExistsError` with the row untouched, invalid input →
 * `InvalidArgumentError` with nothing written); `updateTag` (step and/or description, never
 * `max_id`; unknown tag → `TagNotFoundError`; invalid input refused).
 */
export function leafAllocStoreContract(
  name: string,
  open: () => Promise<LeafAllocStoreHarness>,
  runner: ContractRunner = globalContractRunner(),
): void {
  const { describe, it, expect, beforeEach } = runner;
  describe(`LeafAllocStore contract: ${name}`, () => {
    let store: LeafAllocStore;
    const harness = harnessOnce(runner, open, (h) => {
      store = h.store;
    });

    beforeEach(async () => {
      await harness().clear();
    });

    it("allocates with the row's step, reads the new max_id back, and the next range follows", async () => {
      await harness().insert({ tag: 'basic', maxId: 1n, step: 10 });
      const first = await store.allocate('basic');
      expect(first).toEqual({ tag: 'basic', maxId: 11n, baseStep: 10, appliedStep: 10 });
      expect(typeof first.maxId).toBe('bigint');
      expect(await harness().maxId('basic')).toBe(11n);
      const second = await store.allocate('basic');
      expect(rangeOf(second)).toEqual({ start: 11n, end: 21n });
      expect(await harness().maxId('basic')).toBe(21n);
    });

    it("applies a custom step once; the row's step stays the base step", async () => {
      await harness().insert({ tag: 'custom', maxId: 100n, step: 10 });
      expect(await store.allocate('custom', 25)).toEqual({
        tag: 'custom',
        maxId: 125n,
        baseStep: 10,
        appliedStep: 25,
      });
      expect(await store.allocate('custom')).toEqual({
        tag: 'custom',
        maxId: 135n,
        baseStep: 10,
        appliedStep: 10,
      });
      const [row] = await store.listAll();
      expect(row).toMatchObject({ tag: 'custom', maxId: 135n, step: 10 });
    });

    it('rejects an unknown tag with TagNotFoundError and never creates its row', async () => {
      await harness().insert({ tag: 'known', maxId: 1n, step: 10 });
      for (const step of [undefined, 5]) {
        const error = await rejectionOf(store.allocate('no-such-tag', step));
        expect(error).toBeInstanceOf(TagNotFoundError);
        expect(error).toMatchObject({ code: LeafErrorCode.TAG_NOT_FOUND, tag: 'no-such-tag' });
      }
      expect(await harness().count()).toBe(1);
      expect(await harness().maxId('no-such-tag')).toBeNull();
      expect(await store.listTags()).toEqual(['known']);
    });

    it.each([0, -1, 1.5, Number.NaN])(
      'refuses the step %p with AllocationError and leaves max_id unchanged',
      async (step) => {
        await harness().insert({ tag: 'bad-step', maxId: 50n, step: 10 });
        const error = await rejectionOf(store.allocate('bad-step', step));
        expect(error).toBeInstanceOf(AllocationError);
        expect(error).toMatchObject({ code: LeafErrorCode.ALLOCATION_FAILED, tag: 'bad-step' });
        expect(await harness().maxId('bad-step')).toBe(50n);
        // The row is not damaged: the next allocation works.
        expect(rangeOf(await store.allocate('bad-step'))).toEqual({ start: 50n, end: 60n });
      },
    );

    it('refuses a row whose step column is not positive, unless a positive step is given', async () => {
      await harness().insert({ tag: 'zero-step', maxId: 7n, step: 0 });
      await harness().insert({ tag: 'negative-step', maxId: 7n, step: -5 });
      for (const tag of ['zero-step', 'negative-step']) {
        const error = await rejectionOf(store.allocate(tag));
        expect(error).toBeInstanceOf(AllocationError);
        expect(error).toMatchObject({ code: LeafErrorCode.ALLOCATION_FAILED, tag });
        expect(await harness().maxId(tag)).toBe(7n);
      }
      expect(await store.allocate('zero-step', 3)).toMatchObject({ maxId: 10n, appliedStep: 3 });
    });

    it('reaches 2^63-1 exactly, refuses to pass it with IdOverflowError, and leaves max_id unchanged', async () => {
      const start = MAX_INT64 - 7n;
      await harness().insert({ tag: 'near-max', maxId: start, step: 10 });
      const error = await rejectionOf(store.allocate('near-max'));
      expect(error).toBeInstanceOf(IdOverflowError);
      expect(error).toMatchObject({
        code: LeafErrorCode.ID_OVERFLOW,
        tag: 'near-max',
        maxId: start,
        step: 10,
      });
      expect(await harness().maxId('near-max')).toBe(start);

      const last = await store.allocate('near-max', 7);
      expect(last.maxId).toBe(MAX_INT64);
      expect(rangeOf(last)).toEqual({ start, end: MAX_INT64 });
      expect(await rejectionOf(store.allocate('near-max', 1))).toBeInstanceOf(IdOverflowError);
      expect(await harness().maxId('near-max')).toBe(MAX_INT64);
    });

    it('keeps max_id exact beyond 2^53 (2^60 + 7)', async () => {
      await harness().insert({ tag: 'beyond-2-53', maxId: BEYOND_2_53, step: 3 });
      expect(rangeOf(await store.allocate('beyond-2-53'))).toEqual({
        start: BEYOND_2_53,
        end: BEYOND_2_53 + 3n,
      });
      expect(rangeOf(await store.allocate('beyond-2-53', 1000))).toEqual({
        start: BEYOND_2_53 + 3n,
        end: BEYOND_2_53 + 1003n,
      });
      expect(await harness().maxId('beyond-2-53')).toBe(BEYOND_2_53 + 1003n);
      const [row] = await store.listAll();
      expect(row.maxId).toBe(BEYOND_2_53 + 1003n);
    });

    it('gives 50 concurrent allocations disjoint ranges that tile [start, end) without a gap', async () => {
      await harness().insert({ tag: 'concurrent', maxId: 1000n, step: 100 });
      // Half take the row's step, half a custom one, as the dynamic step policy does.
      const steps = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? undefined : i + 1));
      const allocations = await Promise.all(
        steps.map((step) => store.allocate('concurrent', step)),
      );
      allocations.forEach((allocation, i) => {
        expect(allocation).toMatchObject({
          tag: 'concurrent',
          baseStep: 100,
          appliedStep: steps[i] ?? 100,
        });
      });
      const ranges = allocations
        .map(rangeOf)
        .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
      expect(ranges[0].start).toBe(1000n);
      for (let i = 1; i < ranges.length; i++) {
        // Sorted, each starting exactly where the previous ended: disjoint, no gap.
        expect(ranges[i].start).toBe(ranges[i - 1].end);
      }
      const total = steps.reduce<number>((sum, step) => sum + (step ?? 100), 0);
      expect(ranges[ranges.length - 1].end).toBe(1000n + BigInt(total));
      expect(await harness().maxId('concurrent')).toBe(1000n + BigInt(total));
    });

    it('advances only the tag it was asked for', async () => {
      await harness().insert({ tag: 'one', maxId: 1n, step: 10 });
      await harness().insert({ tag: 'two', maxId: 500n, step: 20 });
      await store.allocate('one');
      await store.allocate('one', 3);
      expect(await harness().maxId('one')).toBe(14n);
      expect(await harness().maxId('two')).toBe(500n);
      expect(await store.allocate('two')).toMatchObject({ maxId: 520n, baseStep: 20 });
    });

    it('lists nothing for an empty table', async () => {
      expect(await store.listTags()).toEqual([]);
      expect(await store.listAll()).toEqual([]);
    });

    it('lists every tag, and every row ordered by tag with exact values', async () => {
      await harness().insert({ tag: 'b-tag', maxId: 1n, step: 5, description: 'second' });
      await harness().insert({ tag: 'a-tag', maxId: BEYOND_2_53, step: 20 });
      await harness().insert({ tag: 'c-tag', maxId: 9n, step: 1, description: null });
      await store.allocate('b-tag');

      expect((await store.listTags()).sort()).toEqual(['a-tag', 'b-tag', 'c-tag']);
      const rows = await store.listAll();
      expect(
        rows.map(({ tag, maxId, step, description }) => ({ tag, maxId, step, description })),
      ).toEqual([
        { tag: 'a-tag', maxId: BEYOND_2_53, step: 20, description: null },
        { tag: 'b-tag', maxId: 6n, step: 5, description: 'second' },
        { tag: 'c-tag', maxId: 9n, step: 1, description: null },
      ]);
      for (const row of rows) {
        // update_time defaults to the insert time and follows every allocation.
        expect(row.updateTime).toBeInstanceOf(Date);
        expect(Number.isNaN(row.updateTime?.getTime())).toBe(false);
      }
    });

    it('finds a row exactly, and null for a tag without one', async () => {
      await harness().insert({ tag: 'found', maxId: BEYOND_2_53, step: 7, description: 'd' });
      const row = await store.findTag('found');
      expect(row).toMatchObject({ tag: 'found', maxId: BEYOND_2_53, step: 7, description: 'd' });
      expect(row?.updateTime).toBeInstanceOf(Date);
      expect(await store.findTag('absent')).toBeNull();
      expect(await harness().count()).toBe(1);
    });

    it('creates a tag with max_id 1 and no description by default, and it allocates', async () => {
      const row = await store.createTag({ tag: 'created', step: 10 });
      expect(row).toMatchObject({ tag: 'created', maxId: 1n, step: 10, description: null });
      expect(row.updateTime).toBeInstanceOf(Date);
      expect(await harness().maxId('created')).toBe(1n);
      expect(rangeOf(await store.allocate('created'))).toEqual({ start: 1n, end: 11n });
      expect(await store.listTags()).toEqual(['created']);
    });

    it('creates a tag with max_id beyond 2^53 exactly, and 2^63-1', async () => {
      const row = await store.createTag({
        tag: 'big-start',
        maxId: BEYOND_2_53,
        step: 3,
        description: 'big',
      });
      expect(row).toMatchObject({ maxId: BEYOND_2_53, step: 3, description: 'big' });
      expect(await harness().maxId('big-start')).toBe(BEYOND_2_53);
      expect(rangeOf(await store.allocate('big-start'))).toEqual({
        start: BEYOND_2_53,
        end: BEYOND_2_53 + 3n,
      });
      await store.createTag({ tag: 'at-max', maxId: MAX_INT64, step: 1 });
      expect(await harness().maxId('at-max')).toBe(MAX_INT64);
    });

    it('refuses to create an existing tag with TagExistsError and leaves its row alone', async () => {
      await harness().insert({ tag: 'taken', maxId: 500n, step: 10, description: 'first' });
      const error = await rejectionOf(store.createTag({ tag: 'taken', maxId: 1n, step: 99 }));
      expect(error).toBeInstanceOf(TagExistsError);
      expect(error).toMatchObject({ code: LeafErrorCode.TAG_EXISTS, tag: 'taken' });
      expect(await harness().maxId('taken')).toBe(500n);
      expect(await store.findTag('taken')).toMatchObject({ step: 10, description: 'first' });
      expect(await harness().count()).toBe(1);
    });

    it.each([
      ['step 0', { tag: 'bad', step: 0 }],
      ['step -1', { tag: 'bad', step: -1 }],
      ['step 1.5', { tag: 'bad', step: 1.5 }],
      ['step NaN', { tag: 'bad', step: Number.NaN }],
      ['step 2^31', { tag: 'bad', step: 2 ** 31 }],
      ['max_id 0', { tag: 'bad', step: 1, maxId: 0n }],
      ['max_id -5', { tag: 'bad', step: 1, maxId: -5n }],
      ['max_id 2^63', { tag: 'bad', step: 1, maxId: MAX_INT64 + 1n }],
      ['an empty tag', { tag: '', step: 1 }],
      ['a tag with a space', { tag: 'a b', step: 1 }],
      ['a description of 257 characters', { tag: 'bad', step: 1, description: 'x'.repeat(257) }],
    ])(
      'refuses to create a tag with %s (InvalidArgumentError, nothing written)',
      async (_, input) => {
        const error = await rejectionOf(store.createTag(input));
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect(error).toMatchObject({ code: LeafErrorCode.INVALID_ARGUMENT });
        expect(await harness().count()).toBe(0);
      },
    );

    it('updates step and description, never max_id; the next allocation takes the new step', async () => {
      await harness().insert({ tag: 'tuned', maxId: BEYOND_2_53, step: 10 });
      await store.allocate('tuned');
      const afterStep = await store.updateTag('tuned', { step: 25 });
      expect(afterStep).toMatchObject({ maxId: BEYOND_2_53 + 10n, step: 25, description: null });
      expect(await harness().maxId('tuned')).toBe(BEYOND_2_53 + 10n);
      const afterText = await store.updateTag('tuned', { description: 'orders' });
      expect(afterText).toMatchObject({
        maxId: BEYOND_2_53 + 10n,
        step: 25,
        description: 'orders',
      });
      const both = await store.updateTag('tuned', { step: 5, description: null });
      expect(both).toMatchObject({ maxId: BEYOND_2_53 + 10n, step: 5, description: null });
      expect(await store.allocate('tuned')).toMatchObject({
        maxId: BEYOND_2_53 + 15n,
        baseStep: 5,
        appliedStep: 5,
      });
    });

    it('refuses to update an unknown tag (TagNotFoundError, no row created) or with invalid input', async () => {
      const missing = await rejectionOf(store.updateTag('ghost', { step: 5 }));
      expect(missing).toBeInstanceOf(TagNotFoundError);
      expect(missing).toMatchObject({ code: LeafErrorCode.TAG_NOT_FOUND, tag: 'ghost' });
      expect(await harness().count()).toBe(0);

      await harness().insert({ tag: 'kept', maxId: 70n, step: 10, description: 'x' });
      for (const update of [{}, { step: 0 }, { step: -3 }, { step: 2.5 }, { step: 2 ** 31 }]) {
        const error = await rejectionOf(store.updateTag('kept', update));
        expect(error).toBeInstanceOf(InvalidArgumentError);
      }
      expect(await store.findTag('kept')).toMatchObject({ maxId: 70n, step: 10, description: 'x' });
    });

    it('throws only typed LeafErrors', async () => {
      await harness().insert({ tag: 'typed', maxId: MAX_INT64, step: 1 });
      for (const call of [
        () => store.allocate('missing'),
        () => store.allocate('typed'),
        () => store.allocate('typed', -1),
      ]) {
        expect(await rejectionOf(call())).toBeInstanceOf(LeafError);
      }
    });

    describe('handBack (the unused tail of the newest range, at a graceful stop)', () => {
      it('lowers max_id to newMaxId when max_id is unchanged, and the next range starts there', async () => {
        await harness().insert({ tag: 'back', maxId: 1n, step: 10 });
        const range = await store.allocate('back'); // [1, 11), 1..3 issued
        expect(await store.handBack('back', range.maxId, 4n)).toBe(true);
        expect(await harness().maxId('back')).toBe(4n);
        expect(rangeOf(await store.allocate('back'))).toEqual({ start: 4n, end: 14n });
      });

      it('changes nothing when another allocation moved max_id on (the guard)', async () => {
        await harness().insert({ tag: 'moved', maxId: 1n, step: 10 });
        const ours = await store.allocate('moved');
        await store.allocate('moved'); // another instance: [11, 21)
        expect(await store.handBack('moved', ours.maxId, 5n)).toBe(false);
        expect(await harness().maxId('moved')).toBe(21n);
        // A stale expectation below the current value is refused too, never "merged".
        expect(await store.handBack('moved', 20n, 15n)).toBe(false);
        expect(await harness().maxId('moved')).toBe(21n);
      });

      it('never raises max_id, never goes negative, and writes nothing for an empty tail', async () => {
        await harness().insert({ tag: 'rule', maxId: 50n, step: 10 });
        for (const newMax of [51n, -1n]) {
          const error = await rejectionOf(store.handBack('rule', 50n, newMax));
          expect(error).toBeInstanceOf(AllocationError);
          expect(error).toMatchObject({ code: LeafErrorCode.ALLOCATION_FAILED, tag: 'rule' });
          expect(await harness().maxId('rule')).toBe(50n);
        }
        expect(await store.handBack('rule', 50n, 50n)).toBe(false);
        expect(await harness().maxId('rule')).toBe(50n);
      });

      it('is false for an unknown tag and never creates a row', async () => {
        expect(await store.handBack('no-such-tag', 11n, 5n)).toBe(false);
        expect(await harness().count()).toBe(0);
      });

      it('keeps max_id exact beyond 2^53', async () => {
        await harness().insert({ tag: 'big-back', maxId: BEYOND_2_53, step: 1000 });
        const range = await store.allocate('big-back');
        expect(await store.handBack('big-back', range.maxId, BEYOND_2_53 + 1n)).toBe(true);
        expect(await harness().maxId('big-back')).toBe(BEYOND_2_53 + 1n);
      });

      it('racing an allocation: either the hand-back wins and the range starts at newMaxId, or it changes nothing', async () => {
        await harness().insert({ tag: 'race', maxId: 1n, step: 10 });
        for (let round = 0; round < 10; round++) {
          const ours = await store.allocate('race');
          const firstUnused = ours.maxId - 4n;
          const [lowered, other] = await Promise.all([
            store.handBack('race', ours.maxId, firstUnused),
            store.allocate('race'),
          ]);
          // The other range never overlaps what we issued: it starts at firstUnused or later.
          expect(rangeOf(other).start).toBe(lowered ? firstUnused : ours.maxId);
          expect(await harness().maxId('race')).toBe(other.maxId);
        }
      });
    });

    describe('the ID journal (stores with grantOf)', () => {
      const journal = () => harness().journal!;
      const skip = () => !harness().journal || !store.grantOf;

      it('writes one row per allocation that carries an entry, none without, and grantOf finds it', async () => {
        if (skip()) return;
        await harness().insert({ tag: 'j-basic', maxId: 1n, step: 10 });
        await store.allocate('j-basic');
        const range = await store.allocate('j-basic', 5, undefined, ENTRY);
        await store.allocate('j-basic', 3, undefined, {
          mode: 'sequence',
          instance: 'instance-b:8081',
          term: BEYOND_2_53,
        });
        expect(rangeOf(range)).toEqual({ start: 11n, end: 16n });
        expect(await journal().rows('j-basic')).toEqual([
          { start: 11n, end: 16n, mode: 'segment', instance: 'instance-a:8080', term: null },
          {
            start: 16n,
            end: 19n,
            mode: 'sequence',
            instance: 'instance-b:8081',
            term: BEYOND_2_53,
          },
        ]);
        expect(await store.grantOf!('j-basic', 15n)).toMatchObject({
          tag: 'j-basic',
          start: 11n,
          end: 16n,
          instance: 'instance-a:8080',
        });
        expect(await store.grantOf!('j-basic', 18n)).toMatchObject({
          mode: 'sequence',
          term: BEYOND_2_53,
        });
        expect((await store.grantOf!('j-basic', 18n))!.grantedAt).toBeInstanceOf(Date);
        // The range without an entry, past the end, another tag: no row holds them.
        expect(await store.grantOf!('j-basic', 5n)).toBeNull();
        expect(await store.grantOf!('j-basic', 19n)).toBeNull();
        expect(await store.grantOf!('other', 15n)).toBeNull();
      });

      it('keeps ranges beyond 2^53 exact', async () => {
        if (skip()) return;
        await harness().insert({ tag: 'j-big', maxId: BEYOND_2_53, step: 1000 });
        await store.allocate('j-big', undefined, undefined, ENTRY);
        expect(await store.grantOf!('j-big', BEYOND_2_53 + 999n)).toMatchObject({
          start: BEYOND_2_53,
          end: BEYOND_2_53 + 1000n,
        });
        expect(await store.grantOf!('j-big', MAX_INT64)).toBeNull();
      });

      it('finds an ID handed back and granted again in its newer range', async () => {
        if (skip()) return;
        await harness().insert({ tag: 'j-back', maxId: 1n, step: 10 });
        const first = await store.allocate('j-back', undefined, undefined, ENTRY);
        expect(await store.handBack('j-back', first.maxId, 5n)).toBe(true);
        await store.allocate('j-back', undefined, undefined, { ...ENTRY, instance: 'b' });
        expect(await store.grantOf!('j-back', 3n)).toMatchObject({ instance: 'instance-a:8080' });
        expect(await store.grantOf!('j-back', 7n)).toMatchObject({ start: 5n, instance: 'b' });
      });

      it('grants no range when its row cannot be written: the allocation fails, max_id stays', async () => {
        if (skip()) return;
        await harness().insert({ tag: 'j-broken', maxId: 1n, step: 10 });
        await journal().break();
        try {
          await expect(
            store.allocate('j-broken', undefined, undefined, ENTRY),
          ).rejects.toBeInstanceOf(LeafError);
          expect(await harness().maxId('j-broken')).toBe(1n);
        } finally {
          await journal().repair();
        }
        expect(await journal().rows('j-broken')).toEqual([]);
        expect(rangeOf(await store.allocate('j-broken', undefined, undefined, ENTRY))).toEqual({
          start: 1n,
          end: 11n,
        });
        expect(await journal().rows('j-broken')).toHaveLength(1);
      });

      it('leaves no row for an allocation rolled back after its row was written', async () => {
        const failing = harness().journal?.failingAfterJournal;
        if (skip() || !failing) return;
        await harness().insert({ tag: 'j-rollback', maxId: 1n, step: 10 });
        await expect(
          failing.allocate('j-rollback', undefined, undefined, ENTRY),
        ).rejects.toBeInstanceOf(LeafError);
        expect(await harness().maxId('j-rollback')).toBe(1n);
        expect(await journal().rows('j-rollback')).toEqual([]);
        expect(await store.grantOf!('j-rollback', 1n)).toBeNull();
      });
    });
  });
}
