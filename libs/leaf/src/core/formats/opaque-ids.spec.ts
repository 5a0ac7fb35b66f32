import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { LeafConfigurationError } from '../errors/leaf-configuration.error';
import { LeafErrorCode } from '../errors/leaf.error';
import { OpaqueKeyRetiredError } from '../errors/opaque.error';
import { MAX_LEAF_ID } from '../leaf-id-text';
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from '../snowflake/snowflake-layout';
import { base62Value, decodeIdText, encodeIdText } from './id-text-forms';
import { OPAQUE_ID_PATTERN, OPAQUE_UUID_PATTERN, OpaqueIds, parseOpaqueKeys } from './opaque-ids';
import { SnowflakeUuidV7 } from './snowflake-uuid-v7';

// Fixed keys: the statistics below are then the same on every run (no flaky threshold).
const K1 = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
const K2 = Buffer.from('f0e0d0c0b0a090807060504030201000f0e0d0c0b0a09080', 'hex');
const ring = new OpaqueIds([
  { version: 1, key: K1 },
  { version: 2, key: K2 },
]);

/** The 63-bit value under an opaque text (its 11 base62 characters). */
const valueOf = (text: string): bigint => decodeIdText(text.slice(1), 'base62');

function popcount(x: bigint): number {
  let count = 0;
  for (let rest = x; rest > 0n; rest &= rest - 1n) count++;
  return count;
}

// npm test's size is 3·10^4; CI's full-size stage (.ci/run) runs 10^6 (LEAF_OPAQUE_PROPERTY_IDS).
const N = Number(process.env.LEAF_OPAQUE_PROPERTY_IDS ?? 30_000);

describe('OpaqueIds', () => {
  it('writes the newest key, reads every listed version, refuses a retired one', () => {
    const id = 1_796_212_352_749_000n;
    const text = ring.encode(id);
    expect(text).toMatch(OPAQUE_ID_PATTERN);
    expect(text[0]).toBe('B'); // version 2, the last listed
    const old = ring.encode(id, 1);
    expect(old[0]).toBe('A');
    expect(old.slice(1)).not.toBe(text.slice(1));
    expect(ring.decode(text)).toBe(id);
    expect(ring.decode(old)).toBe(id);

    const rotated = new OpaqueIds([{ version: 2, key: K2 }]); // version 1 retired
    expect(rotated.decode(text)).toBe(id);
    expect(() => rotated.decode(old)).toThrow(OpaqueKeyRetiredError);
    expect(() => rotated.decode(old)).toThrow(
      expect.objectContaining({ code: LeafErrorCode.OPAQUE_KEY_RETIRED, version: 1 }),
    );
    expect(() => rotated.encode(id, 1)).toThrow(OpaqueKeyRetiredError);
  });

  it('covers 1..2^63 − 1 and refuses what is not an ID or an opaque text', () => {
    for (const id of [1n, 2n, MAX_LEAF_ID - 1n, MAX_LEAF_ID]) {
      expect(ring.decode(ring.encode(id))).toBe(id);
    }
    expect(() => ring.encode(0n)).toThrow(InvalidArgumentError);
    expect(() => ring.encode(MAX_LEAF_ID + 1n)).toThrow(InvalidArgumentError);
    for (const text of [
      '',
      'B123',
      '1AAAAAAAAAAA',
      'B00000000000',
      'BAzL8n0Y58m8',
      'B-AAAAAAAAAA',
    ]) {
      // B00000000000 is the value 0, BAzL8n0Y58m8 is 2^63: outside the permutation.
      expect(() => ring.decode(text)).toThrow(InvalidArgumentError);
    }
    expect(encodeIdText(MAX_LEAF_ID, 'base62')).toBe('AzL8n0Y58m7');
  });

  it('reads its keys from `v<N>:<base64>` entries, never quoting one in a problem', () => {
    const secret = K1.toString('base64');
    const problems: string[] = [];
    expect(parseOpaqueKeys([`v1:${secret}`, `27:${K2.toString('base64')}`], problems)).toEqual([
      { version: 1, key: K1 },
      { version: 27, key: K2 },
    ]);
    expect(problems).toEqual([]);
    expect(OpaqueIds.fromEntries([`27:${secret}`]).encode(5n)[0]).toBe('a');

    const bad = [`v53:${secret}`, `v1:${secret}`, `v1:${secret}`, 'v2:c2hvcnQ=', `${secret}`];
    const error = (() => {
      try {
        OpaqueIds.fromEntries(bad);
      } catch (caught) {
        return caught as LeafConfigurationError;
      }
    })();
    expect(error).toBeInstanceOf(LeafConfigurationError);
    expect(error?.problems).toEqual([
      expect.stringContaining('item 1 must be'),
      expect.stringContaining('item 5 must be'),
      'opaque key version 1 is listed twice',
      'opaque key 3: an AES key is 16, 24 or 32 bytes (got 5)',
    ]);
    expect(error?.message).not.toContain(secret);
    expect(() => new OpaqueIds([])).toThrow(LeafConfigurationError);
  });

  // The proof of docs/public-ids.md: 10^6 consecutive IDs, the worst case for hiding order.
  it(`is a permutation over ${N} IDs whose texts look random: uniform digits, neighbours unrelated`, () => {
    const texts = new Set<string>();
    const counts = Array.from({ length: 11 }, () => new Array<number>(62).fill(0));
    let previous: string | null = null;
    let differingChars = 0;
    let differingBits = 0;
    const BATCH = 1000;
    const batch: string[] = [];
    for (let i = 1; i <= N; i++) {
      if (batch.length === 0) {
        const ids = Array.from({ length: BATCH }, (_, k) => BigInt(i + k));
        batch.push(...ring.encodeAll(ids).reverse());
        const back = ring.decodeAll([...batch].reverse());
        if (back.some((id, k) => id !== ids[k]))
          throw new Error(`decode(encode(x)) != x near ${i}`);
      }
      const text = batch.pop()!;
      texts.add(text);
      for (let p = 0; p < 11; p++) counts[p]![DIGIT.get(text[p + 1]!)!]!++;
      if (previous !== null) {
        for (let p = 1; p < 12; p++) if (text[p] !== previous[p]) differingChars++;
        differingBits += popcount(valueOf(text) ^ valueOf(previous));
      }
      previous = text;
    }
    expect(texts.size).toBe(N); // no two IDs map to one

    // Chi-square per position at p = 0.001, against the exact share of each digit in
    // 1..2^63 − 1: the leading digit is 0..10 (2^63 / 62^10 ≈ 10.97), the next misses part
    // of its top digits under a leading 10, the others are uniform to 0.2 %.
    const failing = counts.flatMap((count, p) => {
      const digits = p === 0 ? 11 : 62;
      const stat = chiSquare(count.slice(0, digits), (d) => N * digitShare(p, d));
      const limit = p === 0 ? 29.59 : 100.89; // df 10, df 61
      return stat < limit && count.slice(digits).every((c) => c === 0) ? [] : [{ p, stat }];
    });
    expect(failing).toEqual([]);
    // Consecutive IDs: a random pair differs in 10.75 of 11 characters and 31.5 of 63 bits.
    expect(differingChars / (N - 1)).toBeGreaterThan(10.7);
    expect(Math.abs(differingBits / (N - 1) - 31.5)).toBeLessThan(0.05);

    // Every version of the ring reads its own texts back, over random IDs.
    for (const version of ring.versions) {
      const ids = Array.from(
        { length: 100_000 },
        (_, i) => 1n + ((BigInt(i) * 0x9e3779b97f4a7c15n) % MAX_LEAF_ID),
      );
      expect(ring.decodeAll(ring.encodeAll(ids, version))).toEqual(ids);
    }
  }, 300_000);
});

const DIGIT = new Map(
  [...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'].map((c, i) => [c, i]),
);

/** The share of 1..2^63 − 1 whose base62 digit `p` (0: leading, of 11) is `d`. */
function digitShare(p: number, d: number): number {
  const weight = 62n ** BigInt(10 - p);
  const period = 62n * weight;
  const span = MAX_LEAF_ID + 1n; // 0..2^63 − 1, then 0 taken out (all its digits are 0)
  const rest = (span % period) - BigInt(d) * weight;
  const count =
    (span / period) * weight +
    (rest < 0n ? 0n : rest > weight ? weight : rest) -
    (d === 0 ? 1n : 0n);
  return Number(count) / Number(MAX_LEAF_ID);
}

function chiSquare(observed: readonly number[], expected: (digit: number) => number): number {
  return observed.reduce((sum, o, d) => sum + (o - expected(d)) ** 2 / expected(d), 0);
}

describe('OpaqueIds over UUIDv7', () => {
  const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
  const uuids = new SnowflakeUuidV7(layout);
  const FIRST = '00000000-0000-7000-8000-000000000000';
  const LAST = 'ffffffff-ffff-7fff-bfff-ffffffffffff';

  it('reads every UUIDv7 back under each version, refuses a retired one and what is not its text', () => {
    const id = layout.compose(Date.UTC(2026, 11, 7), 5, 9);
    const all = [FIRST, LAST, uuids.fromId(id), '0190c3a5-5a6e-7b1c-9d2e-3f4a5b6c7d8e'];
    for (const version of ring.versions) {
      const texts = ring.encodeUuids(all, version);
      for (const text of texts) expect(text).toMatch(OPAQUE_UUID_PATTERN);
      expect(texts.every((text) => text[0] === 'AB'[version - 1])).toBe(true);
      expect(ring.decodeUuids(texts)).toEqual(all);
    }
    const [text] = ring.encodeUuids([all[2]!]);
    expect(text![0]).toBe('B'); // the newest key
    expect(() =>
      new OpaqueIds([{ version: 2, key: K2 }]).decodeUuids(ring.encodeUuids([FIRST], 1)),
    ).toThrow(OpaqueKeyRetiredError);
    expect(() => ring.encodeUuids(['0190c3a5-5a6e-4b1c-9d2e-3f4a5b6c7d8e'])).toThrow(
      expect.objectContaining({ argument: 'uuid' }), // a UUIDv4
    );
    // 62^21 > 2^122: the largest 21 characters are above the permutation's domain.
    for (const bad of ['', `A${'z'.repeat(21)}`, `A${'0'.repeat(20)}`, `1${'0'.repeat(21)}`]) {
      expect(() => ring.decodeUuids([bad])).toThrow(InvalidArgumentError);
    }
  });

  // The same statistics as the 64-bit proof, on the UUIDs of consecutive snowflake IDs (one
  // worker, one millisecond after another): a tenth of its size (npm test 3000, CI 10^5).
  const M = Math.max(1000, Math.floor(N / 10));
  it(`is a permutation over ${M} UUIDs whose bits look random: uniform, neighbours unrelated`, () => {
    const start = Date.UTC(2026, 0, 1);
    const plain = Array.from({ length: M }, (_, i) =>
      uuids.fromId(layout.compose(start + i, 7, 0)),
    );
    const texts = ring.encodeUuids(plain);
    expect(new Set(texts).size).toBe(M);
    expect(ring.decodeUuids(texts)).toEqual(plain);
    const values = texts.map((text) => base62Value(text.slice(1))!);
    const ones = new Array<number>(122).fill(0);
    let differingBits = 0;
    values.forEach((value, i) => {
      for (let bit = 0; bit < 122; bit++) if ((value >> BigInt(bit)) & 1n) ones[bit]!++;
      if (i > 0) differingBits += popcount(value ^ values[i - 1]!);
    });
    // Each bit is one half of the time, within 4.9 standard deviations (p ≈ 10^-6 per bit).
    const sigma = Math.sqrt(M) / 2;
    expect(ones.filter((count) => Math.abs(count - M / 2) > 4.9 * sigma)).toEqual([]);
    // Neighbours differ in 61 of 122 bits on average, as two random values do.
    expect(Math.abs(differingBits / (M - 1) - 61)).toBeLessThan(
      (5 * Math.sqrt(122)) / 2 / Math.sqrt(M - 1),
    );
  }, 300_000);
});
