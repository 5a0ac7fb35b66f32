import { SequenceFencedError } from '../core/errors/sequence.error';
import type { IssuerFence } from '../core/segment/leaf-alloc-store.port';
import type { IssuerRow, SequenceIssuerStore } from '../core/sequence/sequence-issuer-store.port';

interface Row {
  holder: string | null;
  address: string | null;
  term: bigint;
  expiresAt: number;
}

/**
 * `leaf_sequence_issuer` in memory, with the database's clock given (`now`): the semantics of
 * `TypeormSequenceIssuerStore` for unit tests. {@link assertFence} is the check an allocation
 * makes in its transaction; {@link failing} makes every call fail (the database unreachable).
 */
export class InMemorySequenceIssuerStore implements SequenceIssuerStore {
  private readonly rows = new Map<string, Row>();
  /** While true every call rejects. */
  failing = false;

  /** @param now the database's clock (milliseconds). */
  constructor(private readonly now: () => number) {}

  read(name: string, group: number): Promise<IssuerRow> {
    return this.call(() => {
      const row = this.row(name, group);
      return {
        holder: row.holder,
        address: row.address,
        term: row.term,
        expired: row.expiresAt < this.now(),
      };
    });
  }

  claim(
    name: string,
    group: number,
    claim: { holder: string; address: string; seenTerm: bigint; leaseMs: number },
  ): Promise<bigint | null> {
    return this.call(() => {
      const row = this.row(name, group);
      if (row.term !== claim.seenTerm || !(row.expiresAt < this.now())) return null;
      row.holder = claim.holder;
      row.address = claim.address;
      row.term += 1n;
      row.expiresAt = this.now() + claim.leaseMs;
      return row.term;
    });
  }

  renew(name: string, group: number, holder: string, term: bigint, leaseMs: number) {
    return this.call(() => {
      const row = this.row(name, group);
      if (row.holder !== holder || row.term !== term) return false;
      row.expiresAt = this.now() + leaseMs;
      return true;
    });
  }

  resign(name: string, group: number, holder: string, term: bigint) {
    return this.call(() => {
      const row = this.row(name, group);
      if (row.holder !== holder || row.term !== term) return false;
      row.expiresAt = this.now();
      return true;
    });
  }

  /**
   * The fence check of an allocation.
   * @throws {SequenceFencedError} when the group's row no longer names the fence's holder and term.
   */
  assertFence(tag: string, fence: IssuerFence): void {
    const row = this.row(fence.name, fence.group);
    if (row.holder !== fence.holder || row.term !== fence.term) {
      throw new SequenceFencedError(tag, fence.group, fence.term.toString());
    }
  }

  /** The row as stored (for assertions). */
  peek(name: string, group: number): Readonly<Row> {
    return { ...this.row(name, group) };
  }

  private row(name: string, group: number): Row {
    const key = `${name}/${group}`;
    let row = this.rows.get(key);
    if (!row) {
      row = { holder: null, address: null, term: 0n, expiresAt: Number.NEGATIVE_INFINITY };
      this.rows.set(key, row);
    }
    return row;
  }

  private call<T>(work: () => T): Promise<T> {
    if (this.failing) return Promise.reject(new Error('database unreachable'));
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
