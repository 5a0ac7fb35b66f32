import { createCipheriv, type Cipheriv } from 'node:crypto';

/**
 * NIST SP 800-38G FF1 (format-preserving encryption) over AES from node:crypto, for numeral
 * strings of any radix 2..2^16, given as the integer they spell and their length `n`
 * (docs/design.md, "Opaque public IDs"). The halves are kept as integers from round to round,
 * so a string is never built. Checked against NIST's sample vectors (ff1.spec.ts).
 */
export class Ff1 {
  /** AES-ECB on one block at a time: a block cipher call with no chaining state to carry. */
  private readonly aes: Cipheriv;
  /** Steps 1-5 for each (n, tweak length), with CIPH_K(P), the first CBC-MAC block. */
  private readonly shapes = new Map<string, Shape>();
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
    if (![16, 24, 32].includes(key.length))
      throw new RangeError('FF1 needs a 16, 24 or 32-byte AES key');
    if (!Number.isInteger(radix) || radix < 2 || radix > 65536)
      throw new RangeError('FF1 radix must be 2..65536');
    this.aes = createCipheriv(`aes-${key.length * 8}-ecb`, key, null).setAutoPadding(false);
    this.radixN = BigInt(radix);
  }

  /**
   * The FF1 encryption of the `n` numerals spelling `x`, as the integer the result spells.
   * @throws {RangeError} unless `x` is in 0..radix^n − 1 with radix^n ≥ 1,000,000 (NIST's floor).
   */
  encrypt(x: bigint, n: number, tweak: Uint8Array = EMPTY): bigint {
    return this.run([x], n, tweak, true)[0]!;
  }

  /** The inverse of {@link encrypt}. @throws {RangeError} as it. */
  decrypt(x: bigint, n: number, tweak: Uint8Array = EMPTY): bigint {
    return this.run([x], n, tweak, false)[0]!;
  }

  /**
   * {@link encrypt} of each of `xs`, in one pass: each AES step is one call over the batch.
   * @throws {RangeError} as {@link encrypt}.
   */
  encryptAll(xs: readonly bigint[], n: number, tweak: Uint8Array = EMPTY): bigint[] {
    return this.run(xs, n, tweak, true);
  }

  /** {@link decrypt} of each of `xs`, in one pass. @throws {RangeError} as it. */
  decryptAll(xs: readonly bigint[], n: number, tweak: Uint8Array = EMPTY): bigint[] {
    return this.run(xs, n, tweak, false);
  }

  /** Steps 6-7, for every input at once (the rounds of one input depend on each other). */
  private run(xs: readonly bigint[], n: number, tweak: Uint8Array, forward: boolean): bigint[] {
    const shape = this.shape(n, tweak.length);
    if (this.radix === 2 && n <= 64) return this.runHalvesAsNumbers(xs, n, tweak, forward, shape);
    return this.runHalvesAsBigInts(xs, tweak, forward, shape);
  }

  /** {@link run} for any radix and length: each half a bigint. */
  private runHalvesAsBigInts(
    xs: readonly bigint[],
    tweak: Uint8Array,
    forward: boolean,
    { modU, modV, b, d, qLength, header }: Shape,
  ): bigint[] {
    const count = xs.length;
    const a: bigint[] = [];
    const bHalf: bigint[] = [];
    const q = Buffer.alloc(count * qLength);
    for (let k = 0; k < count; k++) {
      const x = xs[k]!;
      if (x < 0n || x >= modU * modV) throw new RangeError('FF1 input out of its domain');
      a.push(x / modV);
      bHalf.push(x % modV);
      q.set(tweak, k * qLength);
    }
    const work = Buffer.allocUnsafe(count * 16);
    const sBlocks = Math.ceil(d / 16);
    for (let step = 0; step < 10; step++) {
      const i = forward ? step : 9 - step;
      const m = i % 2 === 0 ? modU : modV;
      // Q = T || 0^((−t−b−1) mod 16) || [i] || [NUM(A or B)]_b.
      for (let k = 0; k < count; k++) {
        const end = (k + 1) * qLength;
        q[end - b - 1] = i;
        writeBig(q, end - b, b, forward ? bHalf[k]! : a[k]!);
      }
      const r = this.prf(q, qLength, header, work, count);
      // S = R || CIPH_K(R ⊕ [1]) || …, its first d bytes; y = NUM(S).
      const s = [r];
      for (let block = 1; block < sBlocks; block++) {
        for (let k = 0; k < count * 16; k++) work[k] = r[k]! ^ (k % 16 === 15 ? block : 0);
        s.push(this.aes.update(work));
      }
      for (let k = 0; k < count; k++) {
        // d is a multiple of 4: whole 32-bit words, none across a block.
        let y = 0n;
        for (let at = 0; at < d; at += 4) {
          y = (y << 32n) | BigInt(s[at >> 4]!.readUInt32BE(k * 16 + (at & 15)));
        }
        if (forward) {
          const c = (a[k]! + y) % m;
          a[k] = bHalf[k]!;
          bHalf[k] = c;
        } else {
          const c = (((bHalf[k]! - y) % m) + m) % m;
          bHalf[k] = a[k]!;
          a[k] = c;
        }
      }
    }
    return a.map((high, k) => high * modV + bHalf[k]!);
  }

  /**
   * {@link run} for radix 2 and n ≤ 64 (opaque IDs' 63 bits), the same steps with each half
   * (at most 32 bits) a double: the moduli are powers of two, so `y mod m` is the last 32 bits
   * of S's first d = 8 bytes, and every sum is exact. Equal to the general path, which NIST's
   * vectors check (ff1.spec.ts compares the two).
   */
  private runHalvesAsNumbers(
    xs: readonly bigint[],
    n: number,
    tweak: Uint8Array,
    forward: boolean,
    { modU, b, qLength, header }: Shape,
  ): bigint[] {
    const v = n - Math.floor(n / 2);
    const vBits = BigInt(v);
    const mU = Number(modU);
    const mV = 2 ** v;
    const count = xs.length;
    const a = new Array<number>(count);
    const bHalf = new Array<number>(count);
    const q = Buffer.alloc(count * qLength);
    for (let k = 0; k < count; k++) {
      const x = xs[k]!;
      if (x < 0n || x >> BigInt(n) !== 0n) throw new RangeError('FF1 input out of its domain');
      a[k] = Number(x >> vBits);
      bHalf[k] = Number(x & ((1n << vBits) - 1n));
      q.set(tweak, k * qLength);
    }
    const work = Buffer.allocUnsafe(count * 16);
    for (let step = 0; step < 10; step++) {
      const i = forward ? step : 9 - step;
      const m = i % 2 === 0 ? mU : mV;
      for (let k = 0; k < count; k++) {
        const end = (k + 1) * qLength;
        q[end - b - 1] = i;
        q.writeUIntBE(forward ? bHalf[k]! : a[k]!, end - b, b);
      }
      const r = this.prf(q, qLength, header, work, count);
      for (let k = 0; k < count; k++) {
        // y mod m, m ≤ 2^32: the low 32 bits of NUM(S[0..8)), bytes 4-7 of R.
        const y = r!.readUInt32BE(k * 16 + 4) % m;
        if (forward) {
          const c = (a[k]! + y) % m;
          a[k] = bHalf[k]!;
          bHalf[k] = c;
        } else {
          const c = (bHalf[k]! - y + m) % m;
          bHalf[k] = a[k]!;
          a[k] = c;
        }
      }
    }
    return a.map((high, k) => (BigInt(high) << vBits) | BigInt(bHalf[k]!));
  }

  /**
   * R = PRF(P || Q) of each of the `count` Qs in `q` (`qLength` bytes each): CBC-MAC with
   * CIPH_K(P) precomputed (`header`), one AES call per block over all of them, in `work`.
   */
  private prf(q: Buffer, qLength: number, header: Buffer, work: Buffer, count: number): Buffer {
    let r: Buffer | null = null;
    for (let at = 0; at < qLength; at += 16) {
      for (let k = 0; k < count; k++) {
        for (let j = 0; j < 16; j++) {
          work[k * 16 + j] = (r ? r[k * 16 + j]! : header[j]!) ^ q[k * qLength + at + j]!;
        }
      }
      r = this.aes.update(work);
    }
    return r!;
  }

  /**
   * Steps 1-5 for `n` numerals and a tweak of `t` bytes, once: the halves' moduli, b, d, the
   * buffer of Q, and CIPH_K(P) with P = [1,2,1] [radix]_3 [10] [u mod 256] [n]_4 [t]_4.
   * @throws {RangeError} when radix^n is below NIST's floor of 1,000,000.
   */
  private shape(n: number, t: number): Shape {
    const id = `${n}/${t}`;
    let shape = this.shapes.get(id);
    if (shape === undefined) {
      const u = Math.floor(n / 2);
      const modU = this.radixN ** BigInt(u);
      const modV = this.radixN ** BigInt(n - u);
      if (!Number.isInteger(n) || modU * modV < 1_000_000n)
        throw new RangeError('FF1 input out of its domain');
      const b = Math.ceil((modV - 1n).toString(2).length / 8);
      const p = Buffer.from([1, 2, 1, 0, 0, 0, 10, u % 256, 0, 0, 0, 0, 0, 0, 0, 0]);
      p.writeUIntBE(this.radix, 3, 3);
      p.writeUInt32BE(n, 8);
      p.writeUInt32BE(t, 12);
      shape = {
        modU,
        modV,
        b,
        d: 4 * Math.ceil(b / 4) + 4,
        qLength: t + ((16 - ((t + b + 1) % 16)) % 16) + 1 + b,
        header: this.aes.update(p),
      };
      this.shapes.set(id, shape);
    }
    return shape;
  }
}

/** What FF1 derives from n and the tweak's length (steps 1-5). */
interface Shape {
  readonly modU: bigint;
  readonly modV: bigint;
  readonly b: number;
  readonly d: number;
  /** Bytes of Q = T || 0^((−t−b−1) mod 16) || [i] || [NUM(B)]_b: whole blocks. */
  readonly qLength: number;
  readonly header: Buffer;
}

const EMPTY = new Uint8Array(0);

/** `value` big-endian in `length` bytes of `buffer` from `offset` (48 bits at a time). */
function writeBig(buffer: Buffer, offset: number, length: number, value: bigint): void {
  let rest = value;
  for (let end = offset + length; end > offset; end -= 6) {
    const bytes = Math.min(6, end - offset);
    buffer.writeUIntBE(Number(rest & 0xffffffffffffn) % 2 ** (8 * bytes), end - bytes, bytes);
    rest >>= 48n;
  }
}
