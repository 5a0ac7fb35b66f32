import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { LeafErrorCode } from '../errors/leaf.error';
import {
  DEFAULT_SNOWFLAKE_EPOCH,
  JS_SAFE_EPOCH,
  JS_SAFE_LAYOUT,
  SnowflakeLayout,
} from '../snowflake/snowflake-layout';
import { ID_FORMATS, decodeId, detectIdFormat, parseIdFormat } from './id-decode';
import { encodeIdText } from './id-text-forms';
import { SnowflakeUuidV7 } from './snowflake-uuid-v7';
import { typeIdFromUuid } from './type-id';

const leaf = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
const T = 1_796_212_352_749;
const ID = leaf.compose(T, 7, 51);
const FIELDS = { timestamp: T, date: new Date(T), dataCenterId: 0, workerId: 7, sequence: 51 };

describe('decodeId', () => {
  const uuid = new SnowflakeUuidV7(leaf).fromId(ID);
  const typeId = typeIdFromUuid('order', uuid);

  it('tells each canonical form by its shape', () => {
    expect(detectIdFormat(ID.toString())).toBe('decimal');
    expect(detectIdFormat(encodeIdText(ID, 'base62'))).toBe('base62');
    expect(detectIdFormat(encodeIdText(ID, 'base36'))).toBe('base36');
    expect(detectIdFormat(encodeIdText(ID, 'base32'))).toBe('base32');
    expect(detectIdFormat(uuid)).toBe('uuid');
    expect(detectIdFormat(typeId)).toBe('typeid');
    expect(detectIdFormat(typeId.slice('order_'.length))).toBe('typeid');
    // 13 digits with a leading zero: base36 or base32? Not told; neither is nonsense.
    expect(detectIdFormat('0000000000010')).toBeNull();
    expect(detectIdFormat('hello world')).toBeNull();
  });

  it('reads every numeric form to the number, and to the snowflake fields with a layout', () => {
    for (const format of ['base62', 'base36', 'base32'] as const) {
      const text = encodeIdText(ID, format);
      expect(decodeId(text)).toEqual({ format, id: ID, uuid: null, prefix: null, fields: null });
      expect(decodeId(text, { layout: leaf })).toEqual({
        format,
        id: ID,
        uuid: null,
        prefix: null,
        fields: FIELDS,
      });
    }
    expect(decodeId(ID.toString(), { layout: leaf }).fields).toEqual(FIELDS);
    // A digits-only fixed-width text is read as named.
    expect(decodeId('0000000000010', { format: 'base36' }).id).toBe(36n);
    expect(decodeId('0000000000010', { format: 'base32' }).id).toBe(32n);
  });

  it('reads a UUIDv7 and a TypeID to time, worker, counter and the snowflake ID', () => {
    expect(decodeId(uuid)).toEqual({ format: 'uuid', id: ID, uuid, prefix: null, fields: FIELDS });
    expect(decodeId(typeId)).toEqual({
      format: 'typeid',
      id: ID,
      uuid,
      prefix: 'order',
      fields: FIELDS,
    });
    // Read with another layout: the time and counter stay, the worker split and ID follow it.
    const jsSafe = new SnowflakeLayout(JS_SAFE_EPOCH, JS_SAFE_LAYOUT);
    const other = decodeId(uuid, { layout: jsSafe });
    expect(other.fields).toMatchObject({ timestamp: T, sequence: 51 });
    expect(other.id).not.toBe(ID); // another epoch and split: another number
    expect(decodeId(uuid, { layout: new SnowflakeLayout(T + 1) }).id).toBeNull(); // before its epoch
  });

  it.each<[string, object, string]>([
    ['hello world', {}, 'format'],
    [ID.toString(), { format: 'hex' }, 'format'],
    ['0123', { format: 'base62' }, 'text'],
    ['0', {}, 'format'],
    ['9223372036854775808', { format: 'decimal' }, 'text'],
    ['019b76da-a923-4abc-aa50-000000000000', {}, 'uuid'],
    ['user_00000000000000000000000000', {}, 'uuid'], // the nil UUID: a TypeID, not a UUIDv7
    ['User_00000000000000000000000000', { format: 'typeid' }, 'typeId'],
  ])('refuses %j %j (argument %s)', (text, options, argument) => {
    expect(() => decodeId(text, options)).toThrow(
      expect.objectContaining({ code: LeafErrorCode.INVALID_ARGUMENT, argument }),
    );
  });

  it('checks a format argument against the forms allowed', () => {
    expect(parseIdFormat('base62', ID_FORMATS)).toBe('base62');
    expect(() => parseIdFormat('uuid', ['base62', 'base36'])).toThrow(InvalidArgumentError);
    expect(() => parseIdFormat(undefined, ID_FORMATS)).toThrow(InvalidArgumentError);
  });
});
