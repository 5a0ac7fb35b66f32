import { randomUUID } from 'node:crypto';
import { LeafErrorCode } from '../errors/leaf.error';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from '../snowflake/snowflake-layout';
import { SnowflakeUuidV7 } from './snowflake-uuid-v7';
import { isTypeId, isTypeIdPrefix, parseTypeId, typeIdFromUuid } from './type-id';

/** The typeid spec's own valid examples (spec/valid.yml of jetify-com/typeid, v0.3.0). */
const VALID: Array<[string, string, string]> = [
  ['00000000000000000000000000', '', '00000000-0000-0000-0000-000000000000'],
  ['00000000000000000000000001', '', '00000000-0000-0000-0000-000000000001'],
  ['0000000000000000000000000a', '', '00000000-0000-0000-0000-00000000000a'],
  ['0000000000000000000000000g', '', '00000000-0000-0000-0000-000000000010'],
  ['00000000000000000000000010', '', '00000000-0000-0000-0000-000000000020'],
  ['7zzzzzzzzzzzzzzzzzzzzzzzzz', '', 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
  ['prefix_0123456789abcdefghjkmnpqrs', 'prefix', '0110c853-1d09-52d8-d73e-1194e95b5f19'],
  ['prefix_01h455vb4pex5vsknk084sn02q', 'prefix', '01890a5d-ac96-774b-bcce-b302099a8057'],
  ['pre_fix_00000000000000000000000000', 'pre_fix', '00000000-0000-0000-0000-000000000000'],
];

/** The spec's invalid examples (spec/invalid.yml, v0.3.0), and the reason for each. */
const INVALID: Array<[string, string]> = [
  ['PREFIX_00000000000000000000000000', 'prefix uppercase'],
  ['12345_00000000000000000000000000', 'prefix numeric'],
  ['pre.fix_00000000000000000000000000', 'prefix with a period'],
  ['préfix_00000000000000000000000000', 'prefix not ASCII'],
  ['  prefix_00000000000000000000000000', 'prefix with spaces'],
  [`${'abcdefghijklmnopqrstuvwxyz'.repeat(3).slice(0, 64)}_00000000000000000000000000`, '64'],
  ['_00000000000000000000000000', 'separator with an empty prefix'],
  ['_', 'a separator alone'],
  ['prefix_1234567890123456789012345', 'suffix 25 characters'],
  ['prefix_123456789012345678901234567', 'suffix 27 characters'],
  ['prefix_1234567890123456789012345 ', 'suffix with a space'],
  ['prefix_0123456789ABCDEFGHJKMNPQRS', 'suffix uppercase'],
  ['prefix_123456789-123456789-123456', 'suffix with hyphens'],
  ['prefix_ooooooiiiiiiuuuuuuulllllll', 'suffix outside the alphabet'],
  ['prefix_i23456789ol23456789oi23456', 'Crockford aliases'],
  ['prefix_123456789-0123456789-0123456', 'Crockford hyphens'],
  ['prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz', 'more than 128 bits'],
  ['_prefix_00000000000000000000000000', 'prefix starting with "_"'],
  ['prefix__00000000000000000000000000', 'prefix ending with "_"'],
];

describe('TypeID', () => {
  it.each(VALID)('%s is prefix %j and UUID %s, both ways', (typeId, prefix, uuid) => {
    expect(parseTypeId(typeId)).toEqual({ prefix, uuid });
    expect(typeIdFromUuid(prefix, uuid)).toBe(typeId);
    expect(isTypeId(typeId)).toBe(true);
  });

  it.each(INVALID)('refuses %j (%s)', (text, _why) => {
    expect(isTypeId(text)).toBe(false);
    expect(() => parseTypeId(text)).toThrow(
      expect.objectContaining({ code: LeafErrorCode.INVALID_ARGUMENT, argument: 'typeId' }),
    );
  });

  it('checks the prefix and the UUID when encoding', () => {
    const uuid = randomUUID();
    for (const prefix of ['User', 'user_', '_user', 'us3r', 'a'.repeat(64), 'é']) {
      expect(isTypeIdPrefix(prefix)).toBe(false);
      expect(() => typeIdFromUuid(prefix, uuid)).toThrow(
        expect.objectContaining({ argument: 'prefix' }),
      );
    }
    expect(typeIdFromUuid('a'.repeat(63), uuid)).toMatch(/^a{63}_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    for (const bad of ['', 'not-a-uuid', uuid.replace(/-/g, ''), `${uuid}0`]) {
      expect(() => typeIdFromUuid('user', bad)).toThrow(
        expect.objectContaining({ argument: 'uuid' }),
      );
    }
    // Uppercase hex is read; the TypeID is the same.
    expect(typeIdFromUuid('user', uuid.toUpperCase())).toBe(typeIdFromUuid('user', uuid));
  });

  it('round-trips random UUIDs and keeps the order of snowflake UUIDv7', () => {
    for (let i = 0; i < 20_000; i++) {
      const uuid = randomUUID();
      expect(parseTypeId(typeIdFromUuid('order', uuid))).toEqual({ prefix: 'order', uuid });
    }
    const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
    const uuids = new SnowflakeUuidV7(layout);
    let previous = '';
    for (let i = 0; i < 20_000; i++) {
      const id = layout.compose(1_767_225_600_000 + Math.floor(i / 7), 5, (i % 7) * 100);
      const typeId = typeIdFromUuid('order', uuids.fromId(id));
      if (!(previous < typeId)) throw new Error(`not increasing at ${i}: ${typeId}`);
      previous = typeId;
    }
  });
});
