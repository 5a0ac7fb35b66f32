import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { LeafErrorCode } from '../errors/leaf.error';
import {
  DEFAULT_SNOWFLAKE_EPOCH,
  JS_SAFE_EPOCH,
  JS_SAFE_LAYOUT,
  SnowflakeLayout,
} from '../snowflake/snowflake-layout';
import { ModeDisabledError } from '../errors/mode-disabled.error';
import {
  ID_FORMATS,
  ID_FORMAT_TABLE,
  decodeId,
  detectIdFormat,
  idFormatWriter,
  parseIdFormat,
  type IdFormatContext,
} from './id-format';
import { encodeIdText } from './id-text-forms';
import { SnowflakeUuidV7, UUID_V7_PATTERN } from './snowflake-uuid-v7';
import { isTypeId, typeIdFromUuid } from './type-id';
import { OpaqueDisabledError, OpaqueKeyRetiredError } from '../errors/opaque.error';
import { OpaqueIds } from './opaque-ids';

const RING = new OpaqueIds([{ version: 1, key: Buffer.alloc(16, 7) }]);

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

describe('ID_FORMAT_TABLE', () => {
  const ids = [ID, ID + 1n, leaf.compose(T + 1, 7, 0)];
  const snowflake: IdFormatContext = { mode: 'snowflake', key: 'k', layout: leaf, opaque: RING };

  it.each(ID_FORMATS)(
    '%s: each entry reads back what it writes, in the order of the IDs',
    (name) => {
      const entry = ID_FORMAT_TABLE[name];
      const context = { ...snowflake, prefix: 'order' };
      entry.check(context);
      const texts = entry.encode(ids, context);
      expect(texts).toHaveLength(ids.length);
      // Text order is the IDs' order, but for keyed formats, whose point is to hide it.
      if (!entry.keyed) expect([...texts].sort()).toEqual(texts);
      for (const [i, text] of texts.entries()) {
        expect(entry.looksLike(text)).toBe(true);
        expect(detectIdFormat(text)).toBe(name);
        expect(entry.decode(text, context)).toMatchObject({ format: name, id: ids[i] });
      }
    },
  );

  it('writes the numeric forms for the IDs of every mode, without a layout', () => {
    const write = idFormatWriter('base62', { mode: 'segment', key: 'orders' });
    expect(write([1n, 62n])).toEqual(['00000000001', '00000000010']);
    expect(ID_FORMAT_TABLE.decimal.encode([ID], { mode: 'sequence', key: 'k' })).toEqual([
      ID.toString(),
    ]);
  });

  it('writes UUIDv7 and TypeID from snowflake IDs with the layout, checked before any ID', () => {
    const [uuid] = idFormatWriter('uuid', snowflake)([ID]);
    expect(new SnowflakeUuidV7(leaf).toId(uuid!)).toBe(ID);
    const [typeId] = idFormatWriter('typeid', { ...snowflake, prefix: 'user' })([ID]);
    expect(isTypeId(typeId)).toBe(true);
    expect(typeId!.startsWith('user_')).toBe(true);
    expect(idFormatWriter('typeid', snowflake)([ID])[0]).toMatch(/^[0-7][0-9a-z]{25}$/);

    for (const [format, context, argument] of [
      ['uuid', { mode: 'segment', key: 'k', layout: leaf }, 'format'],
      ['typeid', { ...snowflake, prefix: 'User' }, 'prefix'],
      ['hex', snowflake, 'format'],
    ] as const) {
      expect(() => idFormatWriter(format, context)).toThrow(
        expect.objectContaining({ code: LeafErrorCode.INVALID_ARGUMENT, argument }),
      );
    }
    const noLayout = idFormatWriter('uuid', { mode: 'snowflake', key: 'k' });
    expect(() => noLayout([ID])).toThrow(ModeDisabledError);
    expect(() => idFormatWriter('uuid', snowflake, ['base62'])).toThrow(InvalidArgumentError);
  });

  it('writes and reads opaque IDs of every mode with the key ring, refuses them without', () => {
    const [text] = idFormatWriter('opaque', { mode: 'segment', key: 'orders', opaque: RING })([7n]);
    expect(decodeId(text!, { opaque: RING })).toEqual({
      format: 'opaque',
      id: 7n,
      uuid: null,
      prefix: null,
      fields: null,
    });
    expect(decodeId(RING.encode(ID), { opaque: RING, layout: leaf }).fields).toEqual(FIELDS);
    // No key ring: refused with the reason, before any ID is taken.
    expect(() => idFormatWriter('opaque', { mode: 'segment', key: 'orders' })).toThrow(
      expect.objectContaining({
        code: LeafErrorCode.OPAQUE_DISABLED,
        message: expect.stringContaining('LEAF_OPAQUE_KEYS'),
      }),
    );
    expect(() => decodeId(text!)).toThrow(OpaqueDisabledError);
    const retired = new OpaqueIds([{ version: 3, key: Buffer.alloc(32, 9) }]);
    expect(() => decodeId(text!, { opaque: retired })).toThrow(OpaqueKeyRetiredError);
  });

  it('writes opaque UUIDs of snowflake IDs only, and reads back the UUIDv7 and its fields', () => {
    const [text] = idFormatWriter('opaque-uuid', snowflake)([ID]);
    const decoded = decodeId(text!, { opaque: RING, layout: leaf });
    expect(decoded).toEqual({
      format: 'opaque-uuid',
      id: ID,
      uuid: expect.stringMatching(UUID_V7_PATTERN),
      prefix: null,
      fields: FIELDS,
    });
    expect(RING.encodeUuids([decoded.uuid!])).toEqual([text]);
    expect(() => idFormatWriter('opaque-uuid', { ...snowflake, mode: 'segment' })).toThrow(
      expect.objectContaining({ argument: 'format' }),
    );
    expect(() => idFormatWriter('opaque-uuid', { ...snowflake, opaque: null })).toThrow(
      OpaqueDisabledError,
    );
  });
});
