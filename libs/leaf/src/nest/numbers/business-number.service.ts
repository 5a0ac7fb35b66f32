import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { assertValidKey } from '../../core/arguments';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { ModeDisabledError } from '../../core/errors/mode-disabled.error';
import { NumberFormatNotFoundError } from '../../core/errors/number-format.error';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import { TagReservedError } from '../../core/errors/tag-reserved.error';
import { monotonicMs } from '../../core/leaf-observer';
import {
  BUSINESS_NUMBER_TIMINGS,
  BusinessNumberIssuer,
} from '../../core/numbers/business-number.issuer';
import {
  checkNewNumberFormat,
  checkNumberFormatUpdate,
  type NewNumberFormat,
  type NumberFormat,
  type NumberFormatUpdate,
  type NumberMode,
} from '../../core/numbers/number-format';
import type { NumberFormatStore } from '../../core/numbers/number-format-store.port';
import type { DecodedNumber } from '../../core/numbers/number-text';
import type { LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import {
  LEAF_ALLOC_STORE,
  LEAF_NUMBER_FORMAT_STORE,
  LEAF_RESOLVED_OPTIONS,
} from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { SegmentService } from '../segment/segment.service';
import { SequenceService } from '../sequence/sequence.service';

export type { DecodedNumber, NewNumberFormat, NumberFormat, NumberFormatUpdate, NumberMode };

/**
 * Business numbers (docs/formats.md, "Business numbers"): `ORD-20261204-000123`, a tag's format
 * over counters that restart each day, month or year of the **database's** clock, issued by
 * segment mode (per instance in order) or sequence mode (in order across the cluster).
 *
 * ```ts
 * await numbers.defineFormat({ tag: 'orders', prefix: 'ORD', datePattern: 'yyyyMMdd',
 *   timeZone: 'Asia/Shanghai', width: 6 });
 * await numbers.next('orders'); // 'ORD-20261204-000001'
 * ```
 *
 * Needs one database (`segment.dataSource`, or `sequence.dataSource` with segment mode off:
 * MySQL/MariaDB, PostgreSQL or SQLite) with
 * `leaf_number_format` (`LEAF_MIGRATIONS`). Its own provider set, registered when segment or
 * sequence mode is on; a format's mode must be on to serve it (else `ModeDisabledError`).
 */
@Injectable()
export class BusinessNumberService {
  private readonly logger = new Logger(BusinessNumberService.name);
  private readonly issuer: BusinessNumberIssuer | null;

  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) options: ResolvedLeafOptions,
    @Inject(LEAF_ALLOC_STORE) private readonly rows: LeafAllocStore,
    @Inject(LEAF_NUMBER_FORMAT_STORE) private readonly formats: NumberFormatStore | null,
    @Optional() segment?: SegmentService,
    @Optional() sequence?: SequenceService,
  ) {
    this.issuer =
      formats === null
        ? null
        : new BusinessNumberIssuer({
            formats,
            rows,
            counters: (mode) => {
              const counters = { segment, sequence }[mode];
              if (counters === undefined) throw new ModeDisabledError(mode);
              return counters;
            },
            // Segment mode's tag cache learns of a new period's row at once.
            counterReady: (tag) => segment?.tagCreated(tag),
            clock: options.clock,
            monotonic: monotonicMs,
            options: BUSINESS_NUMBER_TIMINGS,
          });
  }

  /**
   * The next business number of `tag`, from the mode its format names.
   * @throws {NumberFormatNotFoundError} when the tag has no format.
   * @throws {NumberOverflowError} when the period's counter outgrew the format's width.
   * @throws {ModeDisabledError} when the format's mode is off in this instance.
   * @throws {LeafError} the mode's own errors (`SegmentNotReadyError`, `SequenceNoIssuerError`,
   *   ...); `AllocationError` when the database's clock cannot be read.
   * @throws {LeafConfigurationError} without one `dataSource` (segment's or sequence's).
   */
  next(tag: string): Promise<string> {
    return this.issuer ? this.issuer.next(tag) : this.unconfigured();
  }

  /**
   * `count` business numbers of `tag`, increasing, of one period.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxBatchSize.
   * @throws as {@link next}.
   */
  nextBatch(tag: string, count: number): Promise<string[]> {
    return this.issuer ? this.issuer.nextBatch(tag, count) : this.unconfigured();
  }

  /**
   * As {@link next}, but only from `mode` (the route `/api/{mode}/number/{tag}`).
   * @throws {InvalidArgumentError} when the tag's format names another mode.
   * @throws as {@link next}.
   */
  nextOf(mode: NumberMode, tag: string): Promise<string> {
    return this.issuer ? this.issuer.next(tag, mode) : this.unconfigured();
  }

  /**
   * As {@link nextBatch}, but only from `mode` (the route `/api/{mode}/numbers/{tag}`).
   * @throws {InvalidArgumentError} when the tag's format names another mode.
   * @throws as {@link nextBatch}.
   */
  nextBatchOf(mode: NumberMode, tag: string, count: number): Promise<string[]> {
    return this.issuer ? this.issuer.nextBatch(tag, count, mode) : this.unconfigured();
  }

  /**
   * What a business number of `tag` says: period, counter, the counter's `leaf_alloc` row,
   * mode.
   * @throws {NumberFormatNotFoundError} when the tag has no format.
   * @throws {InvalidArgumentError} when `number` is not one of its numbers.
   */
  decode(tag: string, number: string): Promise<DecodedNumber> {
    return this.issuer ? this.issuer.decode(tag, number) : this.unconfigured();
  }

  /**
   * The period the database's clock is in for `tag`, as this instance serves it.
   * @throws as {@link next}.
   */
  currentPeriod(tag: string): Promise<{ key: string; counterTag: string }> {
    return this.issuer ? this.issuer.currentPeriod(tag) : this.unconfigured();
  }

  /**
   * Refuses what the ID routes (`get`, `ids`, `range` of segment and sequence mode) must not
   * serve: a tag with a business-number format, or one of its period counter rows
   * (`orders:20261204`). Their IDs are the numbers' counters: a range of a million would make
   * every later number overflow its width. Synchronous (a set look-up) once the list of
   * formats was read; before that, the promise of the first read. The list is read again in
   * the background every minute, so a format defined through another instance is refused
   * here within a minute (at once through this one).
   * @throws {TagReservedError} when `tag` is reserved for numbers.
   */
  assertIdTag(tag: string): void | Promise<void> {
    const reserved = this.issuer?.formats.reservedBy(tag) ?? null;
    if (reserved === null) return;
    if (typeof reserved === 'string') throw new TagReservedError(tag, reserved);
    return reserved.then((format) => {
      if (format !== null) throw new TagReservedError(tag, format);
    });
  }

  /**
   * Every format, ordered by tag.
   * @throws {AllocationError} when the table cannot be read.
   */
  async listFormats(): Promise<NumberFormat[]> {
    return this.requireStore().listFormats();
  }

  /**
   * The format of `tag`, as stored.
   * @throws {InvalidArgumentError} for a malformed tag (before any query).
   * @throws {NumberFormatNotFoundError} when it has none.
   */
  async getFormat(tag: string): Promise<NumberFormat> {
    assertValidKey(tag);
    const format = await this.requireStore().findFormat(tag);
    if (format === null) throw new NumberFormatNotFoundError(tag);
    return format;
  }

  /**
   * Defines the format of `tag`, an existing `leaf_alloc` tag (its `step` is the period rows'
   * step). Served at once by this instance, by others on their first call.
   * @throws {InvalidArgumentError} for an invalid format.
   * @throws {TagNotFoundError} when the tag has no `leaf_alloc` row.
   * @throws {NumberFormatExistsError} when the tag has a format (nothing changes).
   */
  async defineFormat(input: NewNumberFormat): Promise<NumberFormat> {
    const store = this.requireStore();
    const format = checkNewNumberFormat(input);
    if ((await this.rows.findTag(format.tag)) === null) throw new TagNotFoundError(format.tag);
    const stored = await store.createFormat(format);
    this.issuer?.formats.changed(stored);
    this.logger.log(`Defined the business-number format of "${stored.tag}"`);
    return stored;
  }

  /**
   * Widens the format of `tag` and/or changes its description; nothing else changes once
   * defined. Other instances take the new width within a minute.
   * @throws {InvalidArgumentError} for an empty change or a width that shrinks.
   * @throws {NumberFormatNotFoundError} when the tag has no format.
   */
  async updateFormat(tag: string, update: NumberFormatUpdate): Promise<NumberFormat> {
    const store = this.requireStore();
    const next = checkNumberFormatUpdate(await this.getFormat(tag), update);
    const stored = await store.updateFormat(tag, next.width, next.description);
    this.issuer?.formats.changed(stored);
    this.logger.log(`Updated the business-number format of "${tag}" (width ${stored.width})`);
    return stored;
  }

  private unconfigured(): Promise<never> {
    return Promise.reject(unconfigured());
  }

  private requireStore(): NumberFormatStore {
    if (this.formats === null) throw unconfigured();
    return this.formats;
  }
}

function unconfigured(): LeafConfigurationError {
  return new LeafConfigurationError([
    'business numbers need segment mode on one database (`segment.dataSource`); a custom store or several databases have none',
  ]);
}
