/**
 * Where gapless series live (docs/design.md, "Gapless numbers"): `leaf_gapless_series`,
 * `leaf_gapless_counter`, `leaf_gapless_number` and `leaf_gapless_record` (migration
 * `CreateLeafGapless1700000000007`). Everything that takes or settles a number runs in one
 * transaction holding the series' lock ({@link GaplessLock}); the decisions made under it
 * are core's (`applyGaplessBatch`), the statements the store's.
 */
import type { GaplessSeries } from './gapless-series';

/** What a number is: taken and not settled yet, or settled either way. */
export const GAPLESS_STATES = ['reserved', 'confirmed', 'voided'] as const;

/** One of {@link GAPLESS_STATES}. */
export type GaplessState = (typeof GAPLESS_STATES)[number];

/** One number of a series (`leaf_gapless_number`). */
export interface GaplessNumberRow {
  periodKey: string;
  number: bigint;
  /** The idempotency key (service mode) or document key (in-transaction mode), or `null`. */
  key: string | null;
  state: GaplessState;
  /** Why it was voided (`expired` for a TTL that ran out); `null` otherwise. */
  reason: string | null;
  /** Epoch ms of the database's clock. */
  reservedAt: number;
  /** When a reservation is voided unless confirmed (database clock); `null` once taken confirmed. */
  expiresAt: number | null;
  settledAt: number | null;
}

/** What a record says: the number was confirmed or voided. */
export type GaplessAction = 'confirm' | 'void';

/** One record of a series' chained journal (`leaf_gapless_record`). */
export interface GaplessRecord {
  readonly seq: bigint;
  readonly periodKey: string;
  readonly number: bigint;
  readonly action: GaplessAction;
  readonly reason: string | null;
  readonly key: string | null;
  /** Epoch ms of the database's clock. */
  readonly at: number;
  readonly prevHash: string;
  readonly hash: string;
}

/** The last record of a series' chain (`seq` 0 and the genesis hash before the first). */
export interface GaplessChainHead {
  readonly seq: bigint;
  readonly hash: string;
}

/** One period's counter: the last number taken in it. */
export interface GaplessCounter {
  readonly periodKey: string;
  readonly last: bigint;
}

/** What a batch changed, written by {@link GaplessLock.write} in as few statements as it can. */
export interface GaplessChanges {
  /** Numbers the batch took (to insert, in their final state). */
  readonly created: readonly GaplessNumberRow[];
  /** Numbers taken before whose state, reason and `settledAt` changed. */
  readonly settled: readonly GaplessNumberRow[];
  /** The last number of the period (the lock's) when the batch took numbers, else `null`. */
  readonly counter: GaplessCounter | null;
  /** Records chained from the lock's head; the head moves to the last. */
  readonly records: readonly GaplessRecord[];
}

/** What a batch reads first ({@link GaplessLock.read}). */
export interface GaplessReads {
  /** The numbers held by the keys asked for (any state). */
  readonly rows: GaplessNumberRow[];
  /** The last number taken in the period asked for (0 before the first, or none asked). */
  readonly last: bigint;
}

/**
 * One transaction holding the lock of one series (its `leaf_gapless_series` row, locked
 * first and alone): every read sees the latest committed rows, every write commits or rolls
 * back with the transaction.
 */
export interface GaplessLock {
  readonly series: GaplessSeries;
  /** The database's clock when the lock was taken, epoch ms. */
  readonly now: number;
  readonly head: GaplessChainHead;
  /** The numbers held by `keys` and, unless `periodKey` is null, that period's counter. */
  read(keys: readonly string[], periodKey: string | null): Promise<GaplessReads>;
  /** Up to `limit` reservations whose `expiresAt` is at or before {@link now}. */
  expiredRows(limit: number): Promise<GaplessNumberRow[]>;
  write(changes: GaplessChanges): Promise<void>;
}

/** The series' tables. */
export interface GaplessStore {
  /**
   * Stores a checked series with `createdAt` from the database's clock.
   * @throws {GaplessSeriesExistsError} when the name is taken (nothing changed).
   */
  createSeries(series: Omit<GaplessSeries, 'createdAt'>): Promise<GaplessSeries>;
  /** Every series, by name. */
  listSeries(): Promise<GaplessSeries[]>;
  findSeries(name: string): Promise<GaplessSeries | null>;
  /**
   * Runs `work` in one transaction holding `series`' lock: commits when it resolves (and only
   * then resolves), rolls back when it rejects.
   * @throws {GaplessSeriesNotFoundError} for an unknown series.
   * @throws {GaplessBusyError} when the lock was not free within the store's bound.
   */
  withLock<T>(series: string, work: (lock: GaplessLock) => Promise<T>): Promise<T>;
  /** True when a reservation of `series` is past its expiry on the database's clock (no lock). */
  hasExpired(series: string): Promise<boolean>;
  /**
   * Runs `work` on one consistent snapshot of the tables (a read-only transaction), so that a
   * report never mixes states from before and after a settlement.
   */
  snapshot<T>(work: (view: GaplessSnapshot) => Promise<T>): Promise<T>;
}

/** Reads of a series' tables on one snapshot ({@link GaplessStore.snapshot}). */
export interface GaplessSnapshot {
  /** Numbers of `series` ordered by period and number, after `after` (exclusive), at most `limit`. */
  readNumbers(
    series: string,
    after: { periodKey: string; number: bigint } | null,
    limit: number,
  ): Promise<GaplessNumberRow[]>;
  /** Records of `series` with `seq` above `afterSeq`, in order, at most `limit`. */
  readRecords(series: string, afterSeq: bigint, limit: number): Promise<GaplessRecord[]>;
  readCounters(series: string): Promise<GaplessCounter[]>;
}

/**
 * A caller's open transaction as in-transaction mode uses it (docs/design.md, "Gapless numbers"):
 * one method that runs a statement with the database's own placeholders (`?` on
 * MySQL/MariaDB, `$1` on PostgreSQL) and resolves to its rows. A TypeORM `EntityManager` is
 * one as it is; `nestjs-leaf/gapless` adapts Prisma, Drizzle and MikroORM transactions.
 */
export interface GaplessSqlExecutor {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}
