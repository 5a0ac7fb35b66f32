import { InvalidArgumentError } from '../core/errors/invalid-argument.error';
import { ModeDisabledError } from '../core/errors/mode-disabled.error';
import { decodeIdText } from '../core/formats/id-text-forms';
import { SnowflakeUuidV7 } from '../core/formats/snowflake-uuid-v7';
import { parseTypeId } from '../core/formats/type-id';
import { IdService, type LeafMode } from '../core/id.service';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from '../core/snowflake/snowflake-layout';
import { EmbeddedIdService } from './embedded-id.service';
import type { SegmentService } from './segment/segment.service';
import type { SnowflakeService } from './snowflake/snowflake.service';

const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
const T = Date.UTC(2026, 11, 4);

/** IDs 1, 2, … of a mode, counting the IDs taken. */
function counting<S>(ids: (n: number) => bigint, extra: object = {}) {
  let taken = 0;
  const service = {
    get: () => Promise.resolve(ids(++taken)),
    getIds: (_key: string, count: number) =>
      Promise.resolve(Array.from({ length: count }, () => ids(++taken))),
    ...extra,
  } as unknown as S;
  return { service, taken: () => taken };
}

describe('EmbeddedIdService.getTexts: the IDs of a mode in one of the ID formats', () => {
  it('writes any mode’s IDs in a numeric form', async () => {
    const segment = counting<SegmentService>((n) => BigInt(n));
    const ids = new EmbeddedIdService(segment.service);
    const texts = await ids.getTexts('segment', 'orders', 3, 'base62');
    expect(texts.map((text) => decodeIdText(text, 'base62'))).toEqual([1n, 2n, 3n]);
    expect(await ids.getTexts('segment', 'orders', 1, 'decimal')).toEqual(['4']);
  });

  it('makes UUIDv7 and TypeIDs with the snowflake service’s layout', async () => {
    const snowflake = counting<SnowflakeService>((n) => layout.compose(T, 3, n), { layout });
    const ids = new EmbeddedIdService(undefined, snowflake.service);
    const uuids = await ids.getTexts('snowflake', 'k', 2, 'uuid');
    expect(uuids.map((uuid) => layout.decode(new SnowflakeUuidV7(layout).toId(uuid)).sequence)).toEqual([1, 2]);
    const [typeId] = await ids.getTexts('snowflake', 'k', 1, 'typeid', { prefix: 'user' });
    expect(parseTypeId(typeId!).prefix).toBe('user');
  });

  it('checks the format, mode and prefix before taking an ID', async () => {
    const segment = counting<SegmentService>((n) => BigInt(n));
    const snowflake = counting<SnowflakeService>((n) => layout.compose(T, 3, n), { layout });
    const ids = new EmbeddedIdService(segment.service, snowflake.service);
    await expect(ids.getTexts('segment', 'orders', 1, 'uuid')).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(
      ids.getTexts('snowflake', 'k', 1, 'typeid', { prefix: 'User' }),
    ).rejects.toMatchObject({ argument: 'prefix' });
    await expect(ids.getTexts('snowflake', 'k', 1, 'hex' as never)).rejects.toMatchObject({
      argument: 'format',
    });
    expect([segment.taken(), snowflake.taken()]).toEqual([0, 0]);
  });

  it('answers ModeDisabledError for UUIDv7 with snowflake mode off', async () => {
    const ids = new EmbeddedIdService();
    await expect(ids.getTexts('snowflake', 'k', 1, 'uuid')).rejects.toBeInstanceOf(
      ModeDisabledError,
    );
    await expect(ids.getTexts('segment', 'k', 1, 'base36')).rejects.toMatchObject({
      mode: 'segment',
    });
  });

  it('an IdService of the application’s own gets the numeric forms; UUIDv7 needs its layout', async () => {
    class OwnIds extends IdService {
      get(): Promise<bigint> {
        return Promise.resolve(1n);
      }
      getIds(mode: LeafMode, key: string, count: number): Promise<bigint[]> {
        void mode;
        void key;
        return Promise.resolve(Array.from({ length: count }, (_, i) => BigInt(i + 1)));
      }
    }
    await expect(new OwnIds().getTexts('sequence', 'k', 2, 'base32')).resolves.toEqual([
      '0000000000001',
      '0000000000002',
    ]);
    await expect(new OwnIds().getTexts('snowflake', 'k', 1, 'uuid')).rejects.toBeInstanceOf(
      ModeDisabledError,
    );
  });
});

