/**
 * What one transaction holding a series' lock does with the requests gathered for it
 * (docs/design.md, "Gapless numbers"): answer a key already used with its number, take consecutive
 * numbers for new keys, settle reservations and chain a record for each settlement. Pure
 * decisions over a {@link GaplessLock}; the store runs the statements.
 */
import {
  GaplessKeyMismatchError,
  GaplessNotReservedError,
  GaplessReservationExpiredError,
  GaplessSettledError,
} from '../errors/gapless.error';
import type { LeafError } from '../errors/leaf.error';
import { NumberOverflowError } from '../errors/number-format.error';
import { chainedRecord } from './gapless-chain';
import { GaplessSeriesCalendar } from './gapless-series';
import type {
  GaplessChainHead,
  GaplessLock,
  GaplessNumberRow,
  GaplessRecord,
  GaplessState,
} from './gapless-store.port';

/** The reason a reservation voided by its TTL carries. */
export const GAPLESS_EXPIRED_REASON = 'expired';

/** One request to a series. */
export type GaplessOp = Readonly<
  /** Service mode: a number held for `ttlMs` under `key`. */
  | { kind: 'reserve'; key: string; ttlMs: number }
  /** In-transaction mode: a number confirmed at once (it commits with the caller's rows). */
  | { kind: 'take'; key: string | null }
  | { kind: 'confirm'; key: string; number: bigint }
  | { kind: 'void'; key: string; number: bigint; reason: string }
  /** Voids up to `limit` reservations past their TTL; answers how many. */
  | { kind: 'sweep'; limit: number }
>;

/** A number as the caller sees it. */
export interface GaplessNumber {
  readonly series: string;
  /** `''` for a series without a period, else `2026` / `202612`. */
  readonly periodKey: string;
  readonly number: bigint;
  /** The printed number (`INV-2026-000123`). */
  readonly text: string;
  readonly state: GaplessState;
  readonly key: string | null;
  readonly reason: string | null;
  /** When an unconfirmed reservation is voided (database clock, epoch ms); `null` once settled. */
  readonly expiresAt: number | null;
}

/** The answer to one op: a number, a count (sweep), or a typed refusal. */
export type GaplessOutcome =
  | { readonly ok: true; readonly value: GaplessNumber | number }
  | { readonly ok: false; readonly error: LeafError };

/**
 * Applies `ops` in order under `lock` after one read (the keys' rows, the counter), then
 * writes what changed in one call. The rows it confirmed or voided are added to `settled`
 * (for metrics, once the transaction commits).
 */
export async function applyGaplessBatch(
  lock: GaplessLock,
  ops: readonly GaplessOp[],
  settled: GaplessNumberRow[] = [],
): Promise<GaplessOutcome[]> {
  const batch = new Batch(lock);
  const keys = [...new Set(ops.flatMap((op) => ('key' in op && op.key !== null ? [op.key] : [])))];
  const takes = ops.some((op) => op.kind === 'reserve' || op.kind === 'take');
  if (keys.length > 0 || takes) await batch.read(keys, takes);
  const outcomes: GaplessOutcome[] = [];
  for (const op of ops) {
    try {
      outcomes.push({ ok: true, value: await batch.apply(op) });
    } catch (error) {
      if (!isTypedRefusal(error)) throw error;
      outcomes.push({ ok: false, error });
    }
  }
  settled.push(...(await batch.write()));
  return outcomes;
}

function isTypedRefusal(error: unknown): error is LeafError {
  return (
    error instanceof GaplessNotReservedError ||
    error instanceof GaplessKeyMismatchError ||
    error instanceof GaplessSettledError ||
    error instanceof GaplessReservationExpiredError ||
    error instanceof NumberOverflowError
  );
}

/** The state of one batch: rows read or made, the counter advanced, records chained. */
class Batch {
  private readonly calendar: GaplessSeriesCalendar;
  /** The period of every number the batch takes (the lock's clock). */
  private readonly periodKey: string;
  private readonly byKey = new Map<string, GaplessNumberRow>();
  private readonly created = new Set<GaplessNumberRow>();
  private readonly settled = new Set<GaplessNumberRow>();
  /** The last number taken in {@link periodKey}; `null` until read. */
  private last: bigint | null = null;
  private readonly records: GaplessRecord[] = [];
  private head: GaplessChainHead;

  constructor(private readonly lock: GaplessLock) {
    this.calendar = new GaplessSeriesCalendar(lock.series);
    this.periodKey = this.calendar.periodKey(lock.now);
    this.head = lock.head;
  }

  /** Reads the rows of `keys` and, when the batch `takes` numbers, the period's counter. */
  async read(keys: readonly string[], takes: boolean): Promise<void> {
    const found = await this.lock.read(keys, takes ? this.periodKey : null);
    for (const row of found.rows) this.know(row);
    if (takes) this.last = found.last;
  }

  know(row: GaplessNumberRow): void {
    if (row.key !== null) this.byKey.set(row.key, row);
  }

  async apply(op: GaplessOp): Promise<GaplessNumber | number> {
    switch (op.kind) {
      case 'sweep':
        return this.sweep(op.limit);
      case 'reserve':
      case 'take':
        return this.view(this.take(op));
      case 'confirm':
        return this.view(this.confirm(this.held(op.key, op.number)));
      case 'void':
        return this.view(this.voidRow(this.held(op.key, op.number), op.reason));
    }
  }

  /** Writes what changed; the rows settled. */
  async write(): Promise<GaplessNumberRow[]> {
    const settled = [...this.settled].filter((row) => !this.created.has(row));
    if (this.created.size > 0 || settled.length > 0 || this.records.length > 0)
      await this.lock.write({
        created: [...this.created],
        settled,
        // Every number created was taken from the counter.
        counter: this.created.size > 0 ? { periodKey: this.periodKey, last: this.last! } : null,
        records: this.records,
      });
    return [...this.settled];
  }

  private take(op: Extract<GaplessOp, { kind: 'reserve' | 'take' }>) {
    const known = op.key === null ? undefined : this.byKey.get(op.key);
    if (known) {
      this.refuseVoided(this.expireIfDue(known));
      return op.kind === 'take' && known.state === 'reserved' ? this.confirm(known) : known;
    }
    const { now, series } = this.lock;
    const number = this.last! + 1n;
    if (number.toString().length > series.width)
      throw new NumberOverflowError(series.name, this.periodKey, number, series.width);
    this.last = number;
    const row: GaplessNumberRow = {
      periodKey: this.periodKey,
      number,
      key: op.key,
      state: 'reserved',
      reason: null,
      reservedAt: now,
      expiresAt: op.kind === 'reserve' ? now + op.ttlMs : null,
      settledAt: null,
    };
    this.created.add(row);
    this.know(row);
    return op.kind === 'reserve' ? row : this.confirm(row);
  }

  /** The row `key` holds, checked to be `number`. */
  private held(key: string, number: bigint): GaplessNumberRow {
    const row = this.byKey.get(key);
    if (!row) throw new GaplessNotReservedError(this.lock.series.name, key);
    if (row.number !== number)
      throw new GaplessKeyMismatchError(
        this.lock.series.name,
        key,
        number.toString(),
        row.number.toString(),
      );
    return row;
  }

  private confirm(row: GaplessNumberRow): GaplessNumberRow {
    if (row.state === 'confirmed') return row;
    this.refuseVoided(this.expireIfDue(row));
    this.settle(row, 'confirmed', null);
    return row;
  }

  private voidRow(row: GaplessNumberRow, reason: string): GaplessNumberRow {
    if (row.state === 'voided') return row;
    if (row.state === 'confirmed')
      throw new GaplessSettledError(this.lock.series.name, row.number.toString(), row.state);
    this.settle(row, 'voided', reason);
    return row;
  }

  /** Voids `row` as expired when its TTL ran out on the database's clock. */
  private expireIfDue(row: GaplessNumberRow): GaplessNumberRow {
    if (row.state === 'reserved' && row.expiresAt !== null && row.expiresAt <= this.lock.now)
      this.settle(row, 'voided', GAPLESS_EXPIRED_REASON);
    return row;
  }

  private refuseVoided(row: GaplessNumberRow): void {
    if (row.state !== 'voided') return;
    const number = row.number.toString();
    throw row.reason === GAPLESS_EXPIRED_REASON
      ? new GaplessReservationExpiredError(this.lock.series.name, number)
      : new GaplessSettledError(this.lock.series.name, number, row.state, row.reason);
  }

  private async sweep(limit: number): Promise<number> {
    let voided = 0;
    for (const found of await this.lock.expiredRows(limit)) {
      // A row this batch already touched is the one to change, not the copy just read.
      const row = (found.key !== null && this.byKey.get(found.key)) || found;
      if (row === found) this.know(found);
      if (row.state !== 'reserved') continue;
      this.expireIfDue(row);
      voided++;
    }
    return voided;
  }

  private settle(row: GaplessNumberRow, state: 'confirmed' | 'voided', reason: string | null) {
    const at = this.lock.now;
    row.state = state;
    row.reason = reason;
    row.settledAt = at;
    row.expiresAt = null;
    this.settled.add(row);
    const record = chainedRecord(this.lock.series.name, this.head, {
      periodKey: row.periodKey,
      number: row.number,
      action: state === 'confirmed' ? 'confirm' : 'void',
      reason,
      key: row.key,
      at,
    });
    this.records.push(record);
    this.head = record;
  }

  private view(row: GaplessNumberRow): GaplessNumber {
    return {
      series: this.lock.series.name,
      periodKey: row.periodKey,
      number: row.number,
      text: this.calendar.text(row.periodKey, row.number),
      state: row.state,
      key: row.key,
      reason: row.reason,
      expiresAt: row.expiresAt,
    };
  }
}
