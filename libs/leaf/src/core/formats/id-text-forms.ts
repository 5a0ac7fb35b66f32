/**
 * Short text forms of a numeric ID (1..2^63 − 1): base62 (`0-9A-Za-z`), base36 (`0-9a-z`) and
 * Crockford's base32 (`0-9A-Z` without I, L, O, U). Each is written at a fixed width, the
 * width of 2^63 − 1 in that base, zero-padded; the alphabets are in ASCII order, so comparing
 * two texts of one form byte by byte (`<`, `localeCompare` with no locale rules, a database's
 * binary collation) orders them as their numbers. Pure functions, no state.
 */
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { MAX_LEAF_ID, isLeafId } from '../leaf-id-text';

/** A fixed-width text form of a numeric ID. */
export type IdTextForm = 'base62' | 'base36' | 'base32';

/** The text forms, in the order the docs list them. */
export const ID_TEXT_FORMS: readonly IdTextForm[] = Object.freeze(['base62', 'base36', 'base32']);

/** One radix form: its alphabet (the digits in value order) and what it reads. */
interface Radix {
  readonly alphabet: string;
  /** The alphabet in words, for error messages. */
  readonly described: string;
  readonly base: bigint;
  /** Characters of every text: those of 2^63 − 1. */
  readonly width: number;
  /** Character → digit value: the alphabet and the form's aliases. */
  readonly values: ReadonlyMap<string, number>;
}

function radix(alphabet: string, described: string, aliases: Record<string, number> = {}): Radix {
  const base = BigInt(alphabet.length);
  let width = 1;
  while (base ** BigInt(width) <= MAX_LEAF_ID) width++;
  const values = new Map(Object.entries(aliases));
  for (let i = 0; i < alphabet.length; i++) values.set(alphabet[i]!, i);
  return { alphabet, described, base, width, values };
}

const DIGITS = '0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = UPPER.toLowerCase();
const CROCKFORD = `${DIGITS}ABCDEFGHJKMNPQRSTVWXYZ`;

/** Crockford's decoding: lowercase as uppercase, i and l read as 1, o as 0 (never u). */
const CROCKFORD_ALIASES: Record<string, number> = {
  ...Object.fromEntries([...CROCKFORD.slice(10)].map((char, i) => [char.toLowerCase(), i + 10])),
  ...{ I: 1, i: 1, L: 1, l: 1, O: 0, o: 0 },
};

const RADIXES: Readonly<Record<IdTextForm, Radix>> = Object.freeze({
  base62: radix(`${DIGITS}${UPPER}${LOWER}`, '0-9A-Za-z'),
  base36: radix(`${DIGITS}${LOWER}`, '0-9a-z'),
  base32: radix(CROCKFORD, "Crockford's 0-9A-Z without I, L, O, U", CROCKFORD_ALIASES),
});

/** Characters of each form: base62 11, base36 13, base32 13 (those of 2^63 − 1). */
export const ID_TEXT_WIDTHS: Readonly<Record<IdTextForm, number>> = Object.freeze(
  Object.fromEntries(ID_TEXT_FORMS.map((form) => [form, RADIXES[form].width])),
) as Record<IdTextForm, number>;

function radixOf(form: unknown): Radix {
  if (typeof form === 'string' && Object.hasOwn(RADIXES, form)) {
    return RADIXES[form as IdTextForm];
  }
  throw new InvalidArgumentError(
    `format must be one of ${ID_TEXT_FORMS.join(', ')} (got ${String(form)})`,
    'format',
  );
}

/**
 * The fixed-width text of `id` in `form`: `encodeIdText(1n, 'base62')` is `'00000000001'`.
 * @throws {InvalidArgumentError} unless `id` is a bigint in 1..2^63 − 1, or for an unknown form.
 */
export function encodeIdText(id: bigint, form: IdTextForm): string {
  const r = radixOf(form);
  if (!isLeafId(id)) throw new InvalidArgumentError('id must be a bigint in 1..2^63 - 1', 'id');
  return digitsOf(r, id, r.width);
}

/** `value` in `r` at `width` digits: from the lowest, each prepended, so zero-padded. */
function digitsOf(r: Radix, value: bigint, width: number): string {
  let text = '';
  for (let i = 0, rest = value; i < width; i++, rest /= r.base) {
    text = r.alphabet[Number(rest % r.base)]! + text;
  }
  return text;
}

/** The number `text` spells in `r` (any width), or `null` for a character outside it. */
function valueOf(r: Radix, text: string): bigint | null {
  let value = 0n;
  for (const char of text) {
    const digit = r.values.get(char);
    if (digit === undefined) return null;
    value = value * r.base + BigInt(digit);
  }
  return value;
}

/** The ID `text` encodes in `form`, or `null` when it is not a valid text of that form. */
function tryDecode(r: Radix, text: unknown): bigint | null {
  if (typeof text !== 'string' || text.length !== r.width) return null;
  const id = valueOf(r, text);
  return isLeafId(id) ? id : null;
}

/**
 * The ID a fixed-width text of `form` encodes. Base32 reads Crockford's way: lowercase as
 * uppercase, `i`/`l` as 1, `o` as 0 (`u` and hyphens are refused).
 * @throws {InvalidArgumentError} for a text of another length, a character outside the form,
 *   a value of 0 or above 2^63 − 1, or an unknown form.
 */
export function decodeIdText(text: string, form: IdTextForm): bigint {
  const r = radixOf(form);
  const id = tryDecode(r, text);
  if (id === null) {
    throw new InvalidArgumentError(
      `text must be ${r.width} characters of ${form} (${r.described}) encoding 1..2^63 - 1`,
      'text',
    );
  }
  return id;
}

/** Whether `text` is a valid fixed-width text of `form` (what {@link decodeIdText} accepts). */
export function isIdText(text: unknown, form: IdTextForm): boolean {
  return tryDecode(radixOf(form), text) !== null;
}

/**
 * `value` (0 or more, below 62^width) in base62 at `width` characters, zero-padded: for the
 * numbers wider than an ID (an opaque UUID's 122 bits).
 */
export function base62Digits(value: bigint, width: number): string {
  return digitsOf(RADIXES.base62, value, width);
}

/** The number base62 `text` spells (any width), or `null` for a character outside `0-9A-Za-z`. */
export function base62Value(text: string): bigint | null {
  return valueOf(RADIXES.base62, text);
}
