import { ModeDisabledError } from '../core/errors/mode-disabled.error';
import { IdService, type LeafMode } from '../core/id.service';
import { EmbeddedIdService } from './embedded-id.service';
import type { BusinessNumberService } from './numbers/business-number.service';
import type { SnowflakeService } from './snowflake/snowflake.service';

/** Only what the facade calls: UUIDs and TypeIDs from a snowflake service. */
const snowflake = {
  uuids: (key: string, count: number) =>
    Promise.resolve(Array.from({ length: count }, (_, i) => `${key}-uuid-${i}`)),
  typeIds: (prefix: string, count: number) =>
    Promise.resolve(Array.from({ length: count }, (_, i) => `${prefix}_${i}`)),
} as unknown as SnowflakeService;

/** Only what the facade calls: a batch of business numbers of one mode. */
const numbers = {
  nextBatchOf: (mode: string, tag: string, count: number) =>
    Promise.resolve(Array.from({ length: count }, (_, i) => `${mode}:${tag}-${i + 1}`)),
} as unknown as BusinessNumberService;

describe('EmbeddedIdService: business numbers through IdService', () => {
  it('answers them from BusinessNumberService, in the mode asked for', async () => {
    const ids = new EmbeddedIdService(undefined, undefined, undefined, numbers);
    await expect(ids.businessNumbers('sequence', 'orders', 2)).resolves.toEqual([
      'sequence:orders-1',
      'sequence:orders-2',
    ]);
  });

  it('answers ModeDisabledError (segment) without segment mode, which provides them', async () => {
    await expect(new EmbeddedIdService().businessNumbers('segment', 'orders', 1)).rejects.toMatchObject({
      code: 'LEAF_MODE_DISABLED',
      mode: 'segment',
    });
  });
});

describe('EmbeddedIdService: UUIDv7 and TypeIDs through IdService', () => {
  it('answers them from the snowflake service of this process', async () => {
    const ids = new EmbeddedIdService(undefined, snowflake, undefined);
    await expect(ids.uuids('orders', 2)).resolves.toEqual(['orders-uuid-0', 'orders-uuid-1']);
    await expect(ids.typeIds('user', 1)).resolves.toEqual(['user_0']);
  });

  it('answers ModeDisabledError with snowflake mode off', async () => {
    const ids = new EmbeddedIdService();
    await expect(ids.uuids('orders', 1)).rejects.toBeInstanceOf(ModeDisabledError);
    await expect(ids.typeIds('user', 1)).rejects.toMatchObject({ mode: 'snowflake' });
  });

  it('an IdService of the application’s own that does not offer them answers ModeDisabledError', async () => {
    class OwnIds extends IdService {
      get(mode: LeafMode, key: string): Promise<bigint> {
        void mode;
        void key;
        return Promise.resolve(1n);
      }
      getIds(mode: LeafMode, key: string, count: number): Promise<bigint[]> {
        void mode;
        void key;
        return Promise.resolve(Array.from({ length: count }, (_, i) => BigInt(i + 1)));
      }
    }
    await expect(new OwnIds().uuids('orders', 1)).rejects.toBeInstanceOf(ModeDisabledError);
  });
});
