import { Ff1 } from './ff1';

/**
 * NIST's FF1 sample vectors (SP 800-38G, "FF1 examples", csrc.nist.gov Examples with
 * Intermediate Values): AES-128, -192 and -256, radix 10 and 36, with and without a tweak.
 */
const KEY128 = '2B7E151628AED2A6ABF7158809CF4F3C';
const KEY192 = `${KEY128}EF4359D8D580AA4F`;
const KEY256 = `${KEY192}7F036D6F04FC6A94`;
const TWEAK10 = '39383736353433323130';
const TWEAK36 = '3737373770717273373737';
const VECTORS: readonly [number, string, number, string, string, string][] = [
  [1, KEY128, 10, '', '0123456789', '2433477484'],
  [2, KEY128, 10, TWEAK10, '0123456789', '6124200773'],
  [3, KEY128, 36, TWEAK36, '0123456789abcdefghi', 'a9tv40mll9kdu509eum'],
  [4, KEY192, 10, '', '0123456789', '2830668132'],
  [5, KEY192, 10, TWEAK10, '0123456789', '2496655549'],
  [6, KEY192, 36, TWEAK36, '0123456789abcdefghi', 'xbj3kv35jrawxv32ysr'],
  [7, KEY256, 10, '', '0123456789', '6657667009'],
  [8, KEY256, 10, TWEAK10, '0123456789', '1001623463'],
  [9, KEY256, 36, TWEAK36, '0123456789abcdefghi', 'xs8a0azh2avyalyzuwd'],
];

/** The integer a numeral string of `radix` (digits 0-9a-z) spells, and back at width `n`. */
const num = (text: string, radix: number): bigint =>
  [...text].reduce((acc, c) => acc * BigInt(radix) + BigInt(parseInt(c, radix)), 0n);
const str = (value: bigint, radix: number, n: number): string =>
  value.toString(radix).padStart(n, '0');

describe('Ff1', () => {
  it.each(VECTORS)('passes NIST sample %i', (_sample, key, radix, tweak, plain, cipher) => {
    const ff1 = new Ff1(Buffer.from(key, 'hex'), radix);
    const t = Buffer.from(tweak, 'hex');
    const n = plain.length;
    expect(str(ff1.encrypt(num(plain, radix), n, t), radix, n)).toBe(cipher);
    expect(str(ff1.decrypt(num(cipher, radix), n, t), radix, n)).toBe(plain);
  });

  it('computes radix 2 up to 64 bits with doubles exactly as the general path', () => {
    for (const [key, n, tweak] of [
      [Buffer.alloc(16, 0x5a), 63, new Uint8Array(0)],
      [Buffer.alloc(32, 0x17), 64, new Uint8Array(0)],
      [Buffer.alloc(24, 0x03), 21, Buffer.from('tweak')],
      [Buffer.alloc(16, 0xc4), 40, Buffer.alloc(20, 1)],
    ] as const) {
      const ff1 = new Ff1(key, 2);
      const top = (1n << BigInt(n)) - 1n;
      const xs = [
        0n,
        1n,
        top,
        top - 1n,
        ...Array.from({ length: 500 }, (_, i) => (BigInt(i) * 0x9e3779b97f4a7c15n) & top),
      ];
      const shape = ff1['shape'](n, tweak.length);
      const general = ff1['runHalvesAsBigInts'](xs, tweak, true, shape);
      expect(ff1.encryptAll(xs, n, tweak)).toEqual(general);
      expect(ff1.decryptAll(general, n, tweak)).toEqual(xs);
      expect(ff1['runHalvesAsBigInts'](general, tweak, false, shape)).toEqual(xs);
      expect(() => ff1.encrypt(top + 1n, n, tweak)).toThrow(RangeError);
    }
  });

  it('refuses keys, radixes and inputs outside FF1', () => {
    expect(() => new Ff1(Buffer.alloc(15), 10)).toThrow(RangeError);
    expect(() => new Ff1(Buffer.alloc(16), 1)).toThrow(RangeError);
    const ff1 = new Ff1(Buffer.alloc(16), 10);
    expect(() => ff1.encrypt(10n ** 10n, 10)).toThrow(RangeError);
    expect(() => ff1.encrypt(-1n, 10)).toThrow(RangeError);
    expect(() => ff1.encrypt(1n, 5)).toThrow(RangeError); // 10^5 < NIST's floor of 10^6
  });
});
