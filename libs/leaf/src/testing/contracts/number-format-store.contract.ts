import { checkNewNumberFormat } from '../../core/numbers/number-format';
import type { NumberFormatStore } from '../../core/numbers/number-format-store.port';
import { defineContract } from './contract-runner';

/** What {@link numberFormatStoreContract} needs of one implementation. */
export interface NumberFormatStoreHarness {
  /** A store on an empty `leaf_number_format`. */
  readonly store: NumberFormatStore;
  /** Releases what `open` acquired (runs once, after every case). */
  close(): Promise<void>;
}

/**
 * The contract of a {@link NumberFormatStore} (docs/design.md, "Business numbers"): a format
 * is stored once, as given; a second definition is refused and changes nothing; the width only
 * grows, whoever writes; an unknown tag is a typed error; the database's clock reads in epoch
 * milliseconds.
 */
export const numberFormatStoreContract = defineContract<NumberFormatStoreHarness>(
  'NumberFormatStore',
  (harness, runner) => {
    const { it, expect } = runner;
    const daily = checkNewNumberFormat({
      tag: 'orders',
      prefix: 'ORD',
      datePattern: 'yyyyMMdd',
      timeZone: 'Asia/Shanghai',
      width: 6,
      description: 'orders',
    });

    it('stores a format as given and lists formats by tag', async () => {
      const plain = checkNewNumberFormat({ tag: 'a-plain', width: 19, separator: '' });
      const monthly = checkNewNumberFormat({
        tag: 'invoices',
        mode: 'sequence',
        prefix: 'INV/2',
        separator: '/',
        datePattern: 'yyyyMMdd',
        reset: 'month',
        timeZone: 'America/New_York',
        width: 8,
      });
      expect(await harness().store.createFormat(daily)).toEqual(daily);
      await harness().store.createFormat(monthly);
      await harness().store.createFormat(plain);
      expect(await harness().store.findFormat('orders')).toEqual(daily);
      expect(await harness().store.findFormat('invoices')).toEqual(monthly);
      expect(await harness().store.findFormat('a-plain')).toEqual(plain);
      expect(await harness().store.findFormat('nope')).toBeNull();
      expect((await harness().store.listFormats()).map((f) => f.tag)).toEqual([
        'a-plain',
        'invoices',
        'orders',
      ]);
    });

    it('refuses a second definition and leaves the first alone', async () => {
      await expect(
        harness().store.createFormat({ ...daily, prefix: 'OTHER' }),
      ).rejects.toMatchObject({ code: 'LEAF_NUMBER_FORMAT_EXISTS' });
      expect(await harness().store.findFormat('orders')).toEqual(daily);
    });

    it('lets the width grow and never shrink', async () => {
      expect(await harness().store.updateFormat('orders', 8, 'wider')).toEqual({
        ...daily,
        width: 8,
        description: 'wider',
      });
      await expect(harness().store.updateFormat('orders', 7, null)).rejects.toMatchObject({
        code: 'LEAF_INVALID_ARGUMENT',
      });
      expect((await harness().store.findFormat('orders'))!.width).toBe(8);
      await expect(harness().store.updateFormat('nope', 8, null)).rejects.toMatchObject({
        code: 'LEAF_NUMBER_FORMAT_NOT_FOUND',
      });
    });

    it("reads the database's clock in epoch milliseconds", async () => {
      const before = Date.now();
      const now = await harness().store.databaseNow();
      expect(Number.isSafeInteger(now)).toBe(true);
      // The test database runs on this host: its clock is within seconds of ours.
      expect(Math.abs(now - before)).toBeLessThan(5000);
    });
  },
);
