import { createCipheriv, type Cipher } from 'node:crypto';

/**
 * NIST SP 800-38G FF1 (format-preserving encryption) over AES from node:crypto, for numeral
 * strings of any radix 2..2^16, given as the integer they spell and their length `n`
 * (docs/design.md, "Opaque public IDs"). The halves are kept as integers from round to round,
 * so a string is never built. Checked against NIST's sample vectors (ff1.spec.ts).
 */
export class Ff1 {
  /** AES-ECB on one block at a time: a block cipher call with no chaining state to carry. */
  private readonly aes: Cipher;
  /** CIPH_K(P) for each (n, tweak length): the first CBC-MAC block, the same in every round. */
  private readonly headers = new Map<string, Buffer>();
  private readonly radixN: bigint;

  /**
   * @param key an AES-128, -192 or -256 key (16, 24 or 32 bytes).
   * @param radix the base of the numerals, 2..65536.
   * @throws {RangeError} for another key length or radix.
   */
  constructor(
    key: Uint8Array,
    readonly radix: number,
  ) {
    if (![16, 24, 32].includes(key.length)) throw new RangeError('FF1 needs a 16, 24 or 32-byte AES key');
    if (!Number.isInteger(radix) || radix < 2 || radix > 65536) throw new RangeError('FF1 radix must be 2..65536');
    this.aes = createCipheriv(`aes-${key.length * 8}-ecb`, key, null).setAutoPadding(false);
    this.radixN = BigInt(radix);
  }

  /**
   * The FF1 encryption of the `n` numerals spelling `x`, as the integer the result spells.
   * @throws {RangeError} unless `x` is in 0..radix^n − 1 with radix^n ≥ 1,000,000 (NIST's floor).
   */
  encrypt(x: bigint, n: number, tweak: Uint8Array = EMPTY): bigint {
    return this.run(x, n, tweak, true);
  }

  /** The inverse of {@link encrypt}. @throws {RangeError} as it. */
  decrypt(x: bigint, n: number, tweak: Uint8Array = EMPTY): bigint {
    return this.run(x, n, tweak, false);
  }

  private run(x: bigint, n: number, tweak: Uint8Array, forward: boolean): bigint {
    const radix = this.radixN;
    if (!Number.isInteger(n) || radix ** BigInt(n) < 1_000_000n || x < 0n || x >= radix ** BigInt(n)) {
      throw new RangeError('FF1 input out of its domain');
    }
    const u = Math.floor(n / 2);
    const v = n - u;
    const modU = radix ** BigInt(u);
    const modV = radix ** BigInt(v);
    // Step 3-4: b bytes hold NUM(B); d bytes of the round function's output are used.
    const b = Math.ceil((modV - 1n).toString(2).length / 8);
    const d = 4 * Math.ceil(b / 4) + 4;
    const header = this.header(u, n, tweak.length);
    // Q = T || 0^((−t−b−1) mod 16) || [i] || [NUM(B)]_b, a whole number of blocks.
    const q = Buffer.alloc(tweak.length + ((16 - ((tweak.length + b + 1) % 16)) % 16) + 1 + b);
    q.set(tweak, 0);
    let a = x / modV;
    let bHalf = x % modV;
    for (let step = 0; step < 10; step++) {
      const i = forward ? step : 9 - step;
      const m = i % 2 === 0 ? modU : modV;
      q[q.length - b - 1] = i;
      writeBig(q, q.length - b, b, forward ? bHalf : a);
      const y = this.roundValue(header, q, d);
      if (forward) {
        const c = (a + y) % m;
        a = bHalf;
        bHalf = c;
      } else {
        const c = (((bHalf - y) % m) + m) % m;
        bHalf = a;
        a = c;
      }
    }
    return a * modV + bHalf;
  }

  /** Steps 6.ii-iv: y = NUM(S), S the first `d` bytes of R, R = PRF(P || Q) (CBC-MAC). */
  private roundValue(header: Buffer, q: Buffer, d: number): bigint {
    let r = header;
    for (let at = 0; at < q.length; at += 16) r = this.block(xor(r, q.subarray(at, at + 16)));
    let s = r;
    for (let j = 1; s.length < d; j++) {
      const counter = Buffer.alloc(16);
      counter.writeUInt32BE(j, 12);
      s = Buffer.concat([s, this.block(xor(r, counter))]);
    }
    let y = 0n;
    for (let k = 0; k < d; k++) y = (y << 8n) | BigInt(s[k]!);
    return y;
  }

  /** CIPH_K(P), P = [1,2,1] [radix]_3 [10] [u mod 256] [n]_4 [t]_4. */
  private header(u: number, n: number, t: number): Buffer {
    const id = `${n}/${t}`;
    let header = this.headers.get(id);
    if (header === undefined) {
      const p = Buffer.from([1, 2, 1, 0, 0, 0, 10, u % 256, 0, 0, 0, 0, 0, 0, 0, 0]);
      p.writeUIntBE(this.radix, 3, 3);
      p.writeUInt32BE(n, 8);
      p.writeUInt32BE(t, 12);
      header = this.block(p);
      this.headers.set(id, header);
    }
    return header;
  }

  private block(input: Buffer): Buffer {
    return this.aes.update(input);
  }
}

const EMPTY = new Uint8Array(0);

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.allocUnsafe(16);
  for (let k = 0; k < 16; k++) out[k] = a[k]! ^ b[k]!;
  return out;
}

/** `value` big-endian in `length` bytes of `buffer` from `offset`. */
function writeBig(buffer: Buffer, offset: number, length: number, value: bigint): void {
  let rest = value;
  for (let k = offset + length - 1; k >= offset; k--) {
    buffer[k] = Number(rest & 0xffn);
    rest >>= 8n;
  }
}
