import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { SchedulerRegistry } from '@nestjs/schedule';
import { assertValidKey } from '../../core/arguments';
import {
  assertGaplessReason,
  assertGaplessTtl,
  gaplessNumberArgument,
} from '../../core/gapless/gapless-arguments';
import type { GaplessNumber, GaplessOp } from '../../core/gapless/gapless-batch';
import { GaplessGroupCommit } from '../../core/gapless/gapless-group-commit';
import { GaplessReadiness, type GaplessReadinessState } from '../../core/gapless/gapless-readiness';
import {
  createGaplessSeries,
  existingGaplessSeries,
  type GaplessSeries,
  type NewGaplessSeries,
} from '../../core/gapless/gapless-series';
import type { GaplessSqlExecutor } from '../../core/gapless/gapless-store.port';
import { verifyGaplessSeries, type GaplessReport } from '../../core/gapless/gapless-verify';
import { takeGaplessInTransaction } from '../../adapters/typeorm/gapless.sql';
import type { TypeormGaplessStore } from '../../adapters/typeorm/typeorm-gapless.store';
import {
  LEAF_GAPLESS_OPTIONS,
  LEAF_GAPLESS_STORE,
  LEAF_JOB_NAMES,
  LEAF_RESOLVED_OPTIONS,
  LEAF_SCHEDULER,
} from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { LeafEventRecorder } from '../metrics/leaf-event.recorder';
import { ScheduledTask } from '../scheduled-task';
import type { ResolvedGaplessOptions } from './gapless-options';

/**
 * Gapless numbers (docs/gapless.md): series whose every number from the first to the last
 * is, at any moment, exactly one of reserved, confirmed or voided.
 *
 * - Service mode: `reserve(series, key, ttlMs)` → `confirm` or `void`. The same key answers
 *   the same number, before and after confirmation, across instances and restarts; a
 *   reservation not confirmed within its TTL (the database's clock) is voided with the
 *   reason `expired` by a sweep any instance runs. Requests are group-committed per series:
 *   answered once their transaction committed.
 * - In-transaction mode: `next(series, manager, { documentKey })` inside the caller's own
 *   transaction (a TypeORM `EntityManager`, or the adapters of `nestjs-leaf/gapless` for
 *   Prisma, Drizzle and MikroORM).
 * - `verify(series)`: the accounting and the record chain.
 *
 * Provided by `LeafModule` with its `gapless` option.
 */
@Injectable()
export class GaplessNumberService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(GaplessNumberService.name);
  private readonly commit: GaplessGroupCommit;
  private readonly sweeper: ScheduledTask;
  private readonly health = new GaplessReadiness();

  constructor(
    @Inject(LEAF_GAPLESS_STORE) private readonly store: TypeormGaplessStore,
    @Inject(LEAF_GAPLESS_OPTIONS) private readonly options: ResolvedGaplessOptions,
    @Inject(LEAF_RESOLVED_OPTIONS) leaf: ResolvedLeafOptions,
    @Inject(LEAF_SCHEDULER) scheduler: SchedulerRegistry,
    events: LeafEventRecorder,
  ) {
    this.commit = new GaplessGroupCommit(store, options.maxBatch, {
      committed: (series, settled) => {
        this.health.reached();
        for (const row of settled)
          if (row.state !== 'reserved' && row.settledAt !== null)
            events.gaplessSettled(series, row.state, row.reason, row.settledAt - row.reservedAt);
      },
      failed: (_series, error) => this.health.failed(error),
    });
    this.sweeper = new ScheduledTask(
      scheduler,
      LEAF_JOB_NAMES.gaplessSweep(leaf.name),
      () => this.sweep().then(() => undefined),
      (error) => this.logger.warn(`gapless sweep failed: ${String(error)}`),
    );
  }

  /** Starts the sweep of expired reservations, with one run now (readiness learns the store's state). */
  onApplicationBootstrap(): void {
    this.sweeper.start(this.options.sweepIntervalMs);
    void this.sweeper.run();
  }

  /** Stops the sweep and answers every request already taken. */
  async beforeApplicationShutdown(): Promise<void> {
    this.health.stop();
    await this.sweeper.stop();
    await this.commit.idle();
  }

  /**
   * Creates a series (a `correctionsOf` series must exist first).
   * @throws {InvalidArgumentError} for a malformed field or a `day` period.
   * @throws {GaplessSeriesExistsError}, {@link GaplessSeriesNotFoundError} (`correctionsOf`).
   */
  createSeries(series: NewGaplessSeries): Promise<GaplessSeries> {
    return createGaplessSeries(this.store, series);
  }

  /** Every series, by name. */
  listSeries(): Promise<GaplessSeries[]> {
    return this.store.listSeries();
  }

  /** @throws {GaplessSeriesNotFoundError} */
  async getSeries(name: string): Promise<GaplessSeries> {
    assertValidKey(name);
    return existingGaplessSeries(this.store, name);
  }

  /**
   * The number `key` holds in `series`, reserved now for `ttlMs` if the key is new.
   * @throws {GaplessSettledError} / {@link GaplessReservationExpiredError} when the key's number was voided.
   * @throws {GaplessBusyError}, {@link GaplessSeriesNotFoundError}, {@link InvalidArgumentError}.
   */
  reserve(series: string, key: string, ttlMs = this.options.defaultTtlMs): Promise<GaplessNumber> {
    return this.submit(series, key, () => {
      assertGaplessTtl(ttlMs, this.options.maxTtlMs);
      return { kind: 'reserve', key, ttlMs };
    });
  }

  /**
   * Confirms the number `key` reserved (idempotent).
   * @throws {GaplessNotReservedError}, {@link GaplessKeyMismatchError}, {@link GaplessSettledError}, {@link GaplessReservationExpiredError}.
   */
  confirm(series: string, number: bigint | string, key: string): Promise<GaplessNumber> {
    return this.submit(series, key, () => ({
      kind: 'confirm',
      key,
      number: gaplessNumberArgument(number),
    }));
  }

  /**
   * Voids the number `key` reserved, with `reason` (idempotent; a confirmed number is never
   * voided: it is corrected in its corrections series).
   * @throws {GaplessNotReservedError}, {@link GaplessKeyMismatchError}, {@link GaplessSettledError}.
   */
  void(series: string, number: bigint | string, key: string, reason: string) {
    return this.submit(series, key, () => {
      assertGaplessReason(reason);
      return { kind: 'void', key, number: gaplessNumberArgument(number), reason };
    });
  }

  /**
   * A number of `series` taken inside the caller's open transaction `manager` (a TypeORM
   * `EntityManager`, or `prismaGaplessExecutor(tx)`, ...), confirmed when that transaction
   * commits. The series' lock is held until then: keep the transaction short (on PostgreSQL
   * a transaction idle past `idleInTransactionMs` is ended by the server, rolled back).
   * @throws {GaplessBusyError} when the lock was not free within `lockWaitMs` (roll back, retry).
   */
  next(series: string, manager: GaplessSqlExecutor, options: { documentKey?: string } = {}) {
    assertValidKey(series);
    if (options.documentKey !== undefined) assertValidKey(options.documentKey);
    return takeGaplessInTransaction(
      manager,
      this.store.dialect,
      series,
      options.documentKey ?? null,
      { waitMs: this.options.lockWaitMs, idleMs: this.options.idleInTransactionMs },
    );
  }

  /** @throws {GaplessSeriesNotFoundError} */
  verify(series: string): Promise<GaplessReport> {
    assertValidKey(series);
    return verifyGaplessSeries(this.store, series);
  }

  /** Whether this instance can serve gapless series now (the store answered its last call). */
  readiness(): GaplessReadinessState {
    return this.health.current;
  }

  /** Voids the expired reservations of every series now; how many. */
  async sweep(): Promise<number> {
    let voided = 0;
    for (const series of await this.reaching(this.store.listSeries())) {
      if (!(await this.reaching(this.store.hasExpired(series.name)))) continue;
      voided += (await this.commit.submit(series.name, {
        kind: 'sweep',
        limit: this.options.sweepLimit,
      })) as number;
    }
    return voided;
  }

  /** `call`, its outcome told to readiness. */
  private async reaching<T>(call: Promise<T>): Promise<T> {
    try {
      const value = await call;
      this.health.reached();
      return value;
    } catch (error) {
      this.health.failed(error);
      throw error;
    }
  }

  /** `op()` in the series' next transaction, once `series` and `key` are checked (then `op`'s own). */
  private submit(series: string, key: string, op: () => GaplessOp): Promise<GaplessNumber> {
    assertValidKey(series);
    assertValidKey(key);
    return this.commit.submit(series, op()) as Promise<GaplessNumber>;
  }
}
