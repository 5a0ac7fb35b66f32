import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { LeafErrorCode } from '../errors/leaf.error';
import {
  ID_TEXT_FORMS,
  ID_TEXT_WIDTHS,
  decodeIdText,
  encodeIdText,
  isIdText,
  type IdTextForm,
} from './id-text-forms';
import { prng } from '../../testing/test-helpers';

const MAX = 2n ** 63n - 1n;
const BASES: Record<IdTextForm, bigint> = { base62: 62n, base36: 36n, base32: 32n };

/**
 * 10^6 distinct IDs in 1..2^63 − 1, sorted: the edges (1, 2^k ± 1, base^k ± 1 of every form's
 * base, 2^63 − 1) and random values of every magnitude (63 random bits shifted right by a
 * random 0..62).
 */
function sortedSample(count: number, seed: number): bigint[] {
  const set = new Set<bigint>([1n, 2n, MAX, MAX - 1n]);
  for (let k = 1n; k <= 63n; k++) for (const d of [-1n, 0n, 1n]) set.add(2n ** k + d);
  for (const base of Object.values(BASES)) {
    for (let power = base; power <= MAX; power *= base)
      for (const d of [-1n, 0n, 1n]) set.add(power + d);
  }
  const next = prng(seed);
  while (set.size < count) {
    const bits = (BigInt(next()) << 31n) | BigInt(next() >>> 1);
    set.add(bits >> BigInt(next() % 63));
  }
  return [...set].filter((x) => x >= 1n && x <= MAX).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

// npm test's size is 10^5; CI's full-size stage (.ci/run) runs 10^6 (LEAF_TEXT_FORM_PROPERTY_IDS).
const N = Number(process.env.LEAF_TEXT_FORM_PROPERTY_IDS ?? 100_000);

describe('fixed-width text forms of an ID', () => {
  const sample = sortedSample(N, 0x1eaf);

  it(`has ${N} distinct sorted values, edges included`, () => {
    expect(sample.length).toBeGreaterThanOrEqual(N - 10);
    expect(sample[0]).toBe(1n);
    expect(sample[sample.length - 1]).toBe(MAX);
  });

  it.each(ID_TEXT_FORMS)(
    '%s: fixed width, text order is numeric order, decode(encode(x)) = x',
    (form) => {
      const width = ID_TEXT_WIDTHS[form];
      let previous = '';
      for (let i = 0; i < sample.length; i++) {
        const x = sample[i]!;
        const text = encodeIdText(x, form);
        if (text.length !== width || decodeIdText(text, form) !== x || !(previous < text)) {
          throw new Error(`${form} fails at ${x}: "${text}" after "${previous}"`);
        }
        previous = text;
      }
    },
  );

  it('has the width of 2^63 − 1 in each base', () => {
    expect(ID_TEXT_WIDTHS).toEqual({ base62: 11, base36: 13, base32: 13 });
    for (const form of ID_TEXT_FORMS) {
      expect(BASES[form] ** BigInt(ID_TEXT_WIDTHS[form] - 1)).toBeLessThanOrEqual(MAX);
      expect(BASES[form] ** BigInt(ID_TEXT_WIDTHS[form])).toBeGreaterThan(MAX);
    }
  });

  it('writes known values', () => {
    const cases: Array<[bigint, string, string, string]> = [
      [1n, '00000000001', '0000000000001', '0000000000001'],
      [2128094966440788019n, '2XChFHRNNRr', '0g622pf772pf7', '1V243335G001K'],
      [MAX, 'AzL8n0Y58m7', '1y2p0ij32e8e7', '7ZZZZZZZZZZZZ'],
    ];
    for (const [id, base62, base36, base32] of cases) {
      expect([
        encodeIdText(id, 'base62'),
        encodeIdText(id, 'base36'),
        encodeIdText(id, 'base32'),
      ]).toEqual([base62, base36, base32]);
    }
  });

  it("reads Crockford's base32 in lowercase, with i/l as 1 and o as 0", () => {
    const next = prng(7);
    for (let i = 0; i < 10_000; i++) {
      const x = sample[next() % sample.length]!;
      const text = encodeIdText(x, 'base32');
      expect(decodeIdText(text.toLowerCase(), 'base32')).toBe(x);
      const aliased = text.replace(/1/g, () => 'iIlL'[next() % 4]!).replace(/0/g, 'o');
      expect(decodeIdText(aliased, 'base32')).toBe(x);
    }
  });

  it.each<[IdTextForm, unknown, string]>([
    ['base62', '0000000001', 'one character short'],
    ['base62', '000000000001', 'one character long'],
    ['base62', '0000000000-', 'a character outside the alphabet'],
    ['base62', '00000000000', 'zero'],
    ['base62', 'AzL8n0Y58m8', '2^63'],
    ['base62', 'zzzzzzzzzzz', 'above 2^63 − 1'],
    ['base36', '0000000000001 ', 'a trailing space'],
    ['base36', '000000000000A', 'uppercase (base36 is lowercase)'],
    ['base36', '1y2p0ij32e8e8', '2^63'],
    ['base32', '000000000000U', 'U (not in Crockford’s alphabet)'],
    ['base32', '00000-0000001', 'a hyphen'],
    ['base32', '8000000000000', '2^63'],
    ['base32', '000000000000\u00e9', 'a non-ASCII character'],
    ['base32', 42, 'a number'],
  ])('%s refuses %j (%s) with InvalidArgumentError', (form, text, _why) => {
    expect(isIdText(text, form)).toBe(false);
    const error = (() => {
      try {
        return decodeIdText(text as string, form);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ code: LeafErrorCode.INVALID_ARGUMENT, argument: 'text' });
  });

  it('refuses to encode 0, a negative, 2^63, a number, and an unknown form', () => {
    for (const id of [0n, -1n, MAX + 1n, 5 as unknown as bigint]) {
      expect(() => encodeIdText(id, 'base62')).toThrow(InvalidArgumentError);
    }
    expect(() => encodeIdText(1n, 'base64' as IdTextForm)).toThrow(
      expect.objectContaining({ argument: 'format' }),
    );
    expect(() => decodeIdText('1', 'hex' as IdTextForm)).toThrow(InvalidArgumentError);
  });
});
