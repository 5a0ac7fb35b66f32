import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { LeafConfigurationError } from '../errors/leaf-configuration.error';
import { OpaqueKeyRetiredError } from '../errors/opaque.error';
import { isLeafId } from '../leaf-id-text';
import { Ff1 } from './ff1';
import { base62Digits, base62Value, decodeIdText, encodeIdText } from './id-text-forms';
import { UUID_V7_PATTERN, canonicalUuid } from './snowflake-uuid-v7';

/**
 * Opaque public IDs (docs/public-ids.md): a keyed permutation of 1..2^63 − 1, FF1 (NIST SP
 * 800-38G) with radix 2 over the 63 bits, written as the key's version character and the
 * 11 base62 characters of the result (docs/design.md, "Opaque public IDs"); and of UUIDv7's
 * 122 bits (all but version and variant), written as the version character and 21 base62
 * characters. A key ring of versions: new IDs use the last key listed, every listed version
 * still reads.
 */

/** Versions 1..52; a version's character is `A`..`Z` then `a`..`z`, the first of its IDs. */
const VERSION_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The shape of an opaque ID: a version letter and 11 base62 characters. */
export const OPAQUE_ID_PATTERN = /^[A-Za-z][0-9A-Za-z]{11}$/;

/** The shape of an opaque UUID: a version letter and 21 base62 characters. */
export const OPAQUE_UUID_PATTERN = /^[A-Za-z][0-9A-Za-z]{21}$/;

/** One entry of `opaque.keys` / `LEAF_OPAQUE_KEYS`: `v<1-52>:<base64 AES key>`. */
const KEY_ENTRY = /^v?([1-9]|[1-4][0-9]|5[0-2]):([A-Za-z0-9+/]+={0,2})$/;

/** What a key entry must be, in words (a problem never repeats the entry: it is a secret). */
export const OPAQUE_KEY_NOTE = '`v<1-52>:<base64 of a 16, 24 or 32-byte AES key>`, the last issues';

/** The bits FF1 permutes: those of 2^63 − 1. */
const BITS = 63;

/** The bits of a UUIDv7 FF1 permutes: 48 of time, 12 of `rand_a`, 62 of `rand_b`. */
const UUID_BITS = 122;
const RAND_B = (1n << 62n) - 1n;

/** One key of the ring. */
export interface OpaqueKey {
  /** 1..52: travels in every ID as its first character. */
  readonly version: number;
  /** AES-128, -192 or -256 key. */
  readonly key: Uint8Array;
}

/**
 * The entries of `opaque.keys` read into keys; an entry that does not parse adds a problem
 * (numbered, never quoted: it is a secret). Versions and lengths are the ring's to check.
 */
export function parseOpaqueKeys(entries: readonly string[], problems: string[]): OpaqueKey[] {
  const keys: OpaqueKey[] = [];
  entries.forEach((entry, index) => {
    const match = KEY_ENTRY.exec(entry.trim());
    if (match) keys.push({ version: Number(match[1]), key: Buffer.from(match[2]!, 'base64') });
    else problems.push(`opaque.keys item ${index + 1} must be ${OPAQUE_KEY_NOTE}`);
  });
  return keys;
}

/** What is wrong with a ring of `keys` (nothing: empty). */
function keyProblems(keys: readonly OpaqueKey[]): string[] {
  const problems = keys.length === 0 ? [`opaque.keys must list a key: ${OPAQUE_KEY_NOTE}`] : [];
  keys.forEach(({ version, key }, index) => {
    if (!Number.isInteger(version) || version < 1 || version > VERSION_CHARS.length) {
      problems.push(`opaque key ${index + 1}: version must be 1..${VERSION_CHARS.length}`);
    } else if (keys.findIndex((k) => k.version === version) !== index) {
      problems.push(`opaque key version ${version} is listed twice`);
    }
    if (![16, 24, 32].includes(key.length)) {
      problems.push(
        `opaque key ${index + 1}: an AES key is 16, 24 or 32 bytes (got ${key.length})`,
      );
    }
  });
  return problems;
}

/**
 * The key ring of opaque IDs: `encode` with the newest key (the last listed), `decode` with
 * the version the text names. IDs stay bigint; the texts are 12 characters.
 */
export class OpaqueIds {
  private readonly ciphers = new Map<number, Ff1>();
  /** The version new IDs are written with: the last key listed. */
  readonly current: number;

  /**
   * @throws {LeafConfigurationError} for no key, a version listed twice or outside 1..52, or
   *   a key that is not 16, 24 or 32 bytes.
   */
  constructor(keys: readonly OpaqueKey[]) {
    const problems = keyProblems(keys);
    if (problems.length > 0) throw new LeafConfigurationError(problems);
    for (const { version, key } of keys) this.ciphers.set(version, new Ff1(key, 2));
    this.current = keys.at(-1)!.version;
  }

  /**
   * A ring from `opaque.keys` entries (`v1:<base64>`, …, the last issues).
   * @throws {LeafConfigurationError} listing every entry that does not parse or check.
   */
  static fromEntries(entries: readonly string[]): OpaqueIds {
    const problems: string[] = [];
    const keys = parseOpaqueKeys(entries, problems);
    // Entries that did not parse leave none: not a second problem.
    if (keys.length > 0 || problems.length === 0) problems.push(...keyProblems(keys));
    if (problems.length > 0) throw new LeafConfigurationError(problems);
    return new OpaqueIds(keys);
  }

  /** The versions that read, in the order listed. */
  get versions(): number[] {
    return [...this.ciphers.keys()];
  }

  /**
   * The opaque text of `id`, with key `version` (the newest by default).
   * @throws {InvalidArgumentError} unless `id` is a bigint in 1..2^63 − 1.
   * @throws {OpaqueKeyRetiredError} for a version not in the ring.
   */
  encode(id: bigint, version = this.current): string {
    return this.encodeAll([id], version)[0]!;
  }

  /** {@link encode} of each of `ids`, one AES call per step for the batch. @throws as it. */
  encodeAll(ids: readonly bigint[], version = this.current): string[] {
    for (const id of ids) {
      if (!isLeafId(id)) throw new InvalidArgumentError('id must be a bigint in 1..2^63 - 1', 'id');
    }
    const ff1 = this.cipher(version);
    return ff1.encryptAll(ids, BITS).map((value) => {
      // Cycle-walking: FF1 permutes 0..2^63 − 1, IDs are 1..2^63 − 1, so 0 steps once more.
      while (value === 0n) value = ff1.encrypt(value, BITS);
      return VERSION_CHARS[version - 1] + encodeIdText(value, 'base62');
    });
  }

  /**
   * The ID an opaque text stands for.
   * @throws {InvalidArgumentError} (`text`) for a text that is not an opaque ID.
   * @throws {OpaqueKeyRetiredError} when its key version is not in the ring.
   */
  decode(text: string): bigint {
    return this.decodeAll([text])[0]!;
  }

  /** {@link decode} of each of `texts`, one AES call per step for each version. @throws as it. */
  decodeAll(texts: readonly string[]): bigint[] {
    const byVersion = new Map<number, number[]>();
    for (const [index, text] of texts.entries()) {
      if (typeof text !== 'string' || !OPAQUE_ID_PATTERN.test(text)) {
        throw new InvalidArgumentError(
          'text must be an opaque ID: a key version letter and 11 base62 characters',
          'text',
        );
      }
      const version = VERSION_CHARS.indexOf(text[0]!) + 1;
      this.cipher(version);
      const indexes = byVersion.get(version);
      if (indexes) indexes.push(index);
      else byVersion.set(version, [index]);
    }
    const ids = new Array<bigint>(texts.length);
    for (const [version, indexes] of byVersion) {
      const ff1 = this.cipher(version);
      const values = indexes.map((index) => decodeIdText(texts[index]!.slice(1), 'base62'));
      ff1.decryptAll(values, BITS).forEach((id, k) => {
        while (id === 0n) id = ff1.decrypt(id, BITS);
        ids[indexes[k]!] = id;
      });
    }
    return ids;
  }

  /**
   * The opaque texts of UUIDv7s (canonical, lowercase), with key `version` (the newest by
   * default): the 122 bits that are not version or variant, permuted.
   * @throws {InvalidArgumentError} (`uuid`) for a text that is not a canonical UUIDv7.
   * @throws {OpaqueKeyRetiredError} for a version not in the ring.
   */
  encodeUuids(uuids: readonly string[], version = this.current): string[] {
    const payloads = uuids.map((uuid) => {
      if (typeof uuid !== 'string' || !UUID_V7_PATTERN.test(uuid)) {
        throw new InvalidArgumentError('uuid must be a UUIDv7 in canonical form', 'uuid');
      }
      const value = BigInt(`0x${uuid.replaceAll('-', '')}`);
      return ((value >> 80n) << 74n) | (((value >> 64n) & 0xfffn) << 62n) | (value & RAND_B);
    });
    const prefix = VERSION_CHARS[version - 1];
    return this.cipher(version)
      .encryptAll(payloads, UUID_BITS)
      .map((value) => prefix + base62Digits(value, 21));
  }

  /**
   * The UUIDv7s opaque UUID texts stand for.
   * @throws {InvalidArgumentError} (`text`) for a text that is not an opaque UUID.
   * @throws {OpaqueKeyRetiredError} when its key version is not in the ring.
   */
  decodeUuids(texts: readonly string[]): string[] {
    return texts.map((text) => {
      const value = OPAQUE_UUID_PATTERN.test(text) ? base62Value(text.slice(1)) : null;
      if (value === null || value >> BigInt(UUID_BITS) !== 0n) {
        throw new InvalidArgumentError(
          'text must be an opaque UUID: a key version letter and 21 base62 characters',
          'text',
        );
      }
      const payload = this.cipher(VERSION_CHARS.indexOf(text[0]!) + 1).decrypt(value, UUID_BITS);
      const uuid =
        ((payload >> 74n) << 80n) |
        (7n << 76n) |
        (((payload >> 62n) & 0xfffn) << 64n) |
        (2n << 62n) |
        (payload & RAND_B);
      return canonicalUuid(uuid.toString(16).padStart(32, '0'));
    });
  }

  private cipher(version: number): Ff1 {
    const ff1 = this.ciphers.get(version);
    if (ff1 === undefined) throw new OpaqueKeyRetiredError(version);
    return ff1;
  }
}
