/**
 * Short text forms of a numeric ID (1..2^63 − 1): base62 (`0-9A-Za-z`), base36 (`0-9a-z`) and
 * Crockford's base32 (`0-9A-Z` without I, L, O, U). Each is written at a fixed width, the
 * width of 2^63 − 1 in that base, zero-padded; the alphabets are in ASCII order, so comparing
 * two texts of one form byte by byte (`<`, `localeCompare` with no locale rules, a database's
 * binary collation) orders them as their numbers. Pure functions, no state.
 */
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { MAX_LEAF_ID } from '../leaf-id-text';

// Bound once: under a vm context (Jest's) every global lookup goes through the context's
// interceptor, and the encoder's 22 `Math.floor` calls then cost 40 times as long.
const { floor } = Math;
const { fromCharCode } = String;
const toNumber = Number;
const toBigInt = BigInt;
const { asUintN } = BigInt;

/** A fixed-width text form of a numeric ID. */
export type IdTextForm = 'base62' | 'base36' | 'base32';

/** The text forms, in the order the docs list them. */
export const ID_TEXT_FORMS: readonly IdTextForm[] = Object.freeze(['base62', 'base36', 'base32']);

interface Codec {
  readonly form: IdTextForm;
  readonly alphabet: string;
  /** The alphabet in words, for error messages. */
  readonly described: string;
  readonly base: number;
  /** Characters of every text: those of 2^63 − 1. */
  readonly width: number;
  /** Characters of the low part; the text is `high part | low part`, each a safe integer. */
  readonly lowDigits: number;
  /** `base ^ lowDigits`. */
  readonly split: bigint;
  /** Character code (0-127) → digit value, −1 for a character outside the form. */
  readonly values: Int8Array;
  /** Writes an ID already checked to be in range. */
  readonly encode: (id: bigint) => string;
}

function codec(
  form: IdTextForm,
  alphabet: string,
  described: string,
  extra: Record<string, number> = {},
): Codec {
  const base = alphabet.length;
  let width = 1;
  while (BigInt(base) ** BigInt(width) <= MAX_LEAF_ID) width++;
  const lowDigits = Math.ceil(width / 2);
  const values = new Int8Array(128).fill(-1);
  for (let i = 0; i < base; i++) values[alphabet.charCodeAt(i)] = i;
  for (const [char, value] of Object.entries(extra)) values[char.charCodeAt(0)] = value;
  const parts = {
    form,
    alphabet,
    described,
    base,
    width,
    lowDigits,
    split: BigInt(base) ** BigInt(lowDigits),
    values,
  };
  return { ...parts, encode: encoderOf(parts) };
}

const DIGITS = '0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const CROCKFORD = `${DIGITS}ABCDEFGHJKMNPQRSTVWXYZ`;

/** Crockford's decoding: lowercase as uppercase, i and l read as 1, o as 0 (never u). */
function crockfordAliases(): Record<string, number> {
  const aliases: Record<string, number> = { I: 1, i: 1, L: 1, l: 1, O: 0, o: 0 };
  for (let i = 10; i < CROCKFORD.length; i++) aliases[CROCKFORD[i]!.toLowerCase()] = i;
  return aliases;
}

const CODECS: Readonly<Record<IdTextForm, Codec>> = Object.freeze({
  base62: codec('base62', `${DIGITS}${UPPER}${UPPER.toLowerCase()}`, '0-9A-Za-z'),
  base36: codec('base36', `${DIGITS}${UPPER.toLowerCase()}`, '0-9a-z'),
  base32: codec('base32', CROCKFORD, "Crockford's 0-9A-Z without I, L, O, U", crockfordAliases()),
});

/** Characters of each form: base62 11, base36 13, base32 13 (those of 2^63 − 1). */
export const ID_TEXT_WIDTHS: Readonly<Record<IdTextForm, number>> = Object.freeze({
  base62: CODECS.base62.width,
  base36: CODECS.base36.width,
  base32: CODECS.base32.width,
});

function codecOf(form: unknown): Codec {
  // Compared one by one, not looked up by key: on the request path, and a keyed lookup with
  // three keys is slower than three pointer comparisons.
  if (form === 'base62') return CODECS.base62;
  if (form === 'base36') return CODECS.base36;
  if (form === 'base32') return CODECS.base32;
  throw new InvalidArgumentError(
    `format must be one of ${ID_TEXT_FORMS.join(', ')} (got ${String(form)})`,
    'format',
  );
}

/**
 * The encoder of a codec. A formatted ID is on the request path (bench/formats.bench.ts), so:
 * `id` is split by one bigint division into two safe integers (high and low digits), those
 * into pairs of digits by number division (a table gives both characters of a pair), and the
 * text is made by one `String.fromCharCode` call; Crockford's base32, 5-bit digits, by shifts
 * of two 32-bit halves alone. Written out per width (11: 5 + 6 digits, 13: 6 + 7): a loop
 * prepending characters costs twice as much.
 */
function encoderOf(c: Omit<Codec, 'encode'>): (id: bigint) => string {
  const codes = Uint16Array.from(c.alphabet, (char) => char.charCodeAt(0));
  const { base, split } = c;
  if (base === 32) {
    return (id) => {
      const hi = toNumber(id >> 32n);
      const lo = toNumber(asUintN(32, id));
      return fromCharCode(
        codes[hi >>> 28]!,
        codes[(hi >>> 23) & 31]!,
        codes[(hi >>> 18) & 31]!,
        codes[(hi >>> 13) & 31]!,
        codes[(hi >>> 8) & 31]!,
        codes[(hi >>> 3) & 31]!,
        codes[((hi & 7) << 2) | (lo >>> 30)]!,
        codes[(lo >>> 25) & 31]!,
        codes[(lo >>> 20) & 31]!,
        codes[(lo >>> 15) & 31]!,
        codes[(lo >>> 10) & 31]!,
        codes[(lo >>> 5) & 31]!,
        codes[lo & 31]!,
      );
    };
  }
  // Pair n (0..base² − 1): its first character PH[n], its second PL[n].
  const pair = base * base;
  const PH = new Uint16Array(pair);
  const PL = new Uint16Array(pair);
  for (let n = 0; n < pair; n++) {
    PH[n] = codes[floor(n / base)]!;
    PL[n] = codes[n % base]!;
  }
  if (c.width === 11 && c.lowDigits === 6) {
    return (id) => {
      const q = id / split;
      let hi = toNumber(q);
      let lo = toNumber(id - q * split);
      let d = floor(lo / pair);
      const l3 = lo - d * pair;
      lo = d;
      d = floor(lo / pair);
      const l2 = lo - d * pair;
      const l1 = d;
      d = floor(hi / pair);
      const h3 = hi - d * pair;
      hi = d;
      d = floor(hi / pair);
      const h2 = hi - d * pair;
      return fromCharCode(
        codes[d]!,
        PH[h2]!,
        PL[h2]!,
        PH[h3]!,
        PL[h3]!,
        PH[l1]!,
        PL[l1]!,
        PH[l2]!,
        PL[l2]!,
        PH[l3]!,
        PL[l3]!,
      );
    };
  }
  if (c.width === 13 && c.lowDigits === 7) {
    return (id) => {
      const q = id / split;
      let hi = toNumber(q);
      let lo = toNumber(id - q * split);
      let d = floor(lo / pair);
      const l4 = lo - d * pair;
      lo = d;
      d = floor(lo / pair);
      const l3 = lo - d * pair;
      lo = d;
      d = floor(lo / pair);
      const l2 = lo - d * pair;
      const l1 = d;
      d = floor(hi / pair);
      const h3 = hi - d * pair;
      hi = d;
      d = floor(hi / pair);
      const h2 = hi - d * pair;
      return fromCharCode(
        PH[d]!,
        PL[d]!,
        PH[h2]!,
        PL[h2]!,
        PH[h3]!,
        PL[h3]!,
        codes[l1]!,
        PH[l2]!,
        PL[l2]!,
        PH[l3]!,
        PL[l3]!,
        PH[l4]!,
        PL[l4]!,
      );
    };
  }
  throw new Error(`no encoder for width ${c.width}`);
}

/**
 * The fixed-width text of `id` in `form`: `encodeIdText(1n, 'base62')` is `'00000000001'`.
 * @throws {InvalidArgumentError} unless `id` is a bigint in 1..2^63 − 1, or for an unknown form.
 */
export function encodeIdText(id: bigint, form: IdTextForm): string {
  const c = codecOf(form);
  if (typeof id !== 'bigint' || id < 1n || id > MAX_LEAF_ID) {
    throw new InvalidArgumentError('id must be a bigint in 1..2^63 - 1', 'id');
  }
  return c.encode(id);
}

/** The value of `count` characters of `text` from `from`, or −1 for a character outside the form. */
function valueOf(c: Codec, text: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const code = text.charCodeAt(i);
    const digit = code < 128 ? c.values[code]! : -1;
    if (digit < 0) return -1;
    value = value * c.base + digit;
  }
  return value;
}

/** The ID `text` encodes in `form`, or `null` when it is not a valid text of that form. */
function tryDecode(c: Codec, text: unknown): bigint | null {
  if (typeof text !== 'string' || text.length !== c.width) return null;
  const highDigits = c.width - c.lowDigits;
  const high = valueOf(c, text, 0, highDigits);
  const low = high < 0 ? -1 : valueOf(c, text, highDigits, c.lowDigits);
  if (low < 0) return null;
  const id = toBigInt(high) * c.split + toBigInt(low);
  return id >= 1n && id <= MAX_LEAF_ID ? id : null;
}

/**
 * The ID a fixed-width text of `form` encodes. Base32 reads Crockford's way: lowercase as
 * uppercase, `i`/`l` as 1, `o` as 0 (`u` and hyphens are refused).
 * @throws {InvalidArgumentError} for a text of another length, a character outside the form,
 *   a value of 0 or above 2^63 − 1, or an unknown form.
 */
export function decodeIdText(text: string, form: IdTextForm): bigint {
  const c = codecOf(form);
  const id = tryDecode(c, text);
  if (id === null) {
    throw new InvalidArgumentError(
      `text must be ${c.width} characters of ${form} (${c.described}) encoding 1..2^63 - 1`,
      'text',
    );
  }
  return id;
}

/** Whether `text` is a valid fixed-width text of `form` (what {@link decodeIdText} accepts). */
export function isIdText(text: unknown, form: IdTextForm): boolean {
  return tryDecode(codecOf(form), text) !== null;
}
