import type { HighWaterStore } from '../../core/segment/high-water';
import { globalContractRunner, harnessOnce, type ContractRunner } from './contract-runner';

/** What {@link highWaterStoreContract} needs of one implementation. */
export interface HighWaterStoreHarness {
  /**
   * The store of deployment `name` (`LeafModuleOptions.name`). Two calls for one name are two
   * handles (two instances) on the same marks.
   */
  storeFor(name: string): HighWaterStore;
  /** Releases what `open` acquired (runs once, after the last case). */
  close(): Promise<void>;
}

let serial = 0;
/** A key no earlier case (nor an earlier run on the same storage) used. */
const freshKey = (label: string): string =>
  `${label}-${Date.now().toString(36)}-${(serial++).toString(36)}`;

/**
 * The behaviour every {@link HighWaterStore} must have (docs/design.md, "High-water mark"):
 * a missing mark reads as `null`; creating is a compare-and-set against "absent"; a
 * compare-and-set succeeds only against the mark as last written (a mark lowered back to an
 * earlier value by a hand-back is still a new version: no ABA); of concurrent writers from
 * one read exactly one wins; values beyond 2^53 are exact; deployments (names) never see each
 * other's marks.
 */
export function highWaterStoreContract(
  name: string,
  open: () => Promise<HighWaterStoreHarness>,
  runner: ContractRunner = globalContractRunner(),
): void {
  const { describe, it, expect } = runner;
  describe(`HighWaterStore contract: ${name}`, () => {
    let store: HighWaterStore;
    const harness = harnessOnce(runner, open, (h) => {
      store = h.storeFor('contract');
    });

    /** A fresh key whose mark was created at `value`, and the mark as read back. */
    const created = async (label: string, value: bigint) => {
      const key = freshKey(label);
      await store.write(key, value, null);
      return { key, read: (await store.read(key))! };
    };

    it('reads a mark never written as null', async () => {
      expect(await store.read(freshKey('none'))).toBeNull();
    });

    it('creates a mark once: a second create loses and changes nothing', async () => {
      const key = freshKey('create');
      expect(await store.write(key, 1001n, null)).toBe(true);
      expect(await harness().storeFor('contract').write(key, 7n, null)).toBe(false);
      expect((await store.read(key))?.value).toBe(1001n);
    });

    it('compare-and-sets against the mark as read; a stale read loses', async () => {
      const { key, read } = await created('cas', 1001n);
      expect(await store.write(key, 2001n, read)).toBe(true);
      expect(await harness().storeFor('contract').write(key, 3001n, read)).toBe(false);
      expect((await store.read(key))?.value).toBe(2001n);
    });

    it('a mark lowered back to an earlier value is a new version (no ABA)', async () => {
      const { key, read: first } = await created('aba', 1001n);
      expect(await store.write(key, 2001n, first)).toBe(true);
      // A hand-back lowers it from exactly 2001 back to 1001.
      expect(await store.write(key, 1001n, (await store.read(key))!)).toBe(true);
      // A writer still holding the first read must lose, although the value is the same.
      expect(await store.write(key, 5001n, first)).toBe(false);
      expect((await store.read(key))?.value).toBe(1001n);
    });

    it('of concurrent writers from one read, exactly one wins', async () => {
      const { key, read } = await created('race', 1n);
      const stores = Array.from({ length: 8 }, () => harness().storeFor('contract'));
      const won = await Promise.all(stores.map((s, i) => s.write(key, BigInt(100 + i), read)));
      expect(won.filter(Boolean)).toHaveLength(1);
      expect((await store.read(key))?.value).toBe(BigInt(100 + won.indexOf(true)));
    });

    it('of concurrent creators, exactly one wins', async () => {
      const key = freshKey('first');
      const won = await Promise.all(
        [11n, 12n, 13n, 14n].map((v) => harness().storeFor('contract').write(key, v, null)),
      );
      expect(won.filter(Boolean)).toHaveLength(1);
    });

    it('keeps marks beyond 2^53 exact, up to the largest BIGINT', async () => {
      const big = (1n << 62n) + 3n;
      const { key, read } = await created('big', big);
      expect(read.value).toBe(big);
      const max = (1n << 63n) - 1n;
      expect(await store.write(key, max, read)).toBe(true);
      expect((await store.read(key))?.value).toBe(max);
    });

    it('keeps keys of residue classes (tag#residue) and deployments apart', async () => {
      const tag = freshKey('apart');
      await store.write(tag, 10n, null);
      await store.write(`${tag}#1`, 20n, null);
      const other = harness().storeFor('contract-other');
      expect(await other.read(tag)).toBeNull();
      expect(await other.write(tag, 30n, null)).toBe(true);
      expect((await store.read(tag))?.value).toBe(10n);
      expect((await store.read(`${tag}#1`))?.value).toBe(20n);
      expect((await other.read(tag))?.value).toBe(30n);
    });
  });
}
