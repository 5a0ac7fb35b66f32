import { Inject, Injectable, Optional } from '@nestjs/common';
import { assertValidKey } from '../../core/arguments';
import { IdOriginUnknownError } from '../../core/errors/id-origin-unknown.error';
import { InvalidArgumentError } from '../../core/errors/invalid-argument.error';
import { ModeDisabledError } from '../../core/errors/mode-disabled.error';
import type { LeafMode } from '../../core/id.service';
import { parseLeafId } from '../../core/leaf-id-text';
import type { LeafAllocStore, RangeGrant } from '../../core/segment/leaf-alloc-store.port';
import { LEAF_ALLOC_STORE, LEAF_RESOLVED_OPTIONS } from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { SnowflakeService } from '../snowflake/snowflake.service';

/** Where a snowflake ID's worker ID came from, as the whois answer names it. */
export type WorkerIdSource = 'database' | 'zookeeper' | 'explicit' | 'ordinal';

/**
 * A segment or sequence ID: the journalled range `[start, end)` it was issued from, who was
 * granted it (`LeafModuleOptions.instance`) and when (the granting process's clock).
 */
export interface RangeIdOrigin extends Omit<RangeGrant, 'modulus' | 'residue' | 'source'> {
  readonly id: bigint;
  /** The database that granted it, when several serve the tag. */
  readonly database: string | null;
}

/** A snowflake ID: its fields, and who held its worker ID in its millisecond when that is known. */
export interface SnowflakeIdOrigin {
  readonly id: bigint;
  readonly mode: 'snowflake';
  /** The ID's millisecond (Unix ms). */
  readonly timestamp: number;
  readonly workerId: number;
  readonly dataCenterId: number;
  readonly sequence: number;
  readonly workerSource: WorkerIdSource;
  /**
   * The holder's instance identity (the lease journal's; ZooKeeper: the `ip:port` its worker
   * node was created for); `null` when the worker ID is configured (nobody records who used it).
   */
  readonly instance: string | null;
  /** `snowflake.advertise` of the holder (database: the lease row's holder; ZooKeeper: the node's last writer). */
  readonly holder: string | null;
  /** The holder's run id, when recorded. */
  readonly run: string | null;
  /** The lease epoch of the claim (database). */
  readonly epoch: bigint | null;
  /** When that claim was made (the database's clock). */
  readonly claimedAt: Date | null;
  /** The last millisecond the holder may have issued in (the next claim's start bound); `null`: still current or unknown. */
  readonly until: Date | null;
  /** What the answer rests on, in words (configured worker IDs, another data centre, ...). */
  readonly note: string | null;
}

/** The answer of {@link IdWhoisService.whois}. */
export type IdOrigin = RangeIdOrigin | SnowflakeIdOrigin;

/**
 * Who issued an ID (docs/operations.md, "Who issued an ID"), from the ID journal (option
 * `journal`; docs/design.md, "The ID journal"):
 *
 * - segment and sequence: the journalled range of the tag holding the ID
 *   (`LeafAllocStore.grantOf`): the instance, the issuer's term, when;
 * - snowflake: the ID decoded, then who held its worker ID in its millisecond: the lease
 *   journal's claim for database-leased worker IDs ({@link tenureAt}), the worker node for
 *   ZooKeeper's (its `ip:port` is its name, forever); a configured worker ID (explicit,
 *   ordinal) has no recorded holder, and says so.
 *
 * Reads only; provided by `LeafModule` whatever the modes.
 */
@Injectable()
export class IdWhoisService {
  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly options: ResolvedLeafOptions,
    @Optional() @Inject(LEAF_ALLOC_STORE) private readonly store?: LeafAllocStore,
    @Optional() private readonly snowflake?: SnowflakeService,
  ) {}

  /**
   * Who issued `id` in `mode` (`tag`: the segment or sequence tag).
   * @throws {InvalidArgumentError} for an ID that is not a decimal in 1..2^63-1, a missing or
   *   malformed tag, or an ID outside the snowflake layout.
   * @throws {ModeDisabledError} when `mode` is off here (segment mode's table answers for
   *   sequence IDs too).
   * @throws {IdOriginUnknownError} when the journal is off or knows no range or claim for it.
   * @throws {AllocationError} when the journal cannot be read (the database's error).
   */
  async whois(mode: LeafMode, id: bigint | string, tag?: string): Promise<IdOrigin> {
    const value = typeof id === 'bigint' ? parseLeafId(id.toString()) : parseLeafId(id);
    if (mode === 'snowflake') return this.snowflakeOrigin(value);
    if (mode !== 'segment' && mode !== 'sequence') {
      throw new InvalidArgumentError('mode must be segment, sequence or snowflake', 'mode');
    }
    if (tag === undefined) throw new InvalidArgumentError(`${mode} IDs need their tag`, 'tag');
    assertValidKey(tag);
    // Sequence ranges come from segment mode's table: its journal answers for both.
    const store = this.store;
    if (!store) throw new ModeDisabledError(mode);
    if (!store.grantOf)
      throw new IdOriginUnknownError(value.toString(), 'the store keeps no ID journal');
    const grant = await store.grantOf(tag, value);
    if (!grant) {
      throw new IdOriginUnknownError(
        value.toString(),
        this.options.journal
          ? `no journalled range of "${tag}" holds it (granted before the journal was on, by an instance without it, or never)`
          : 'the ID journal is off here (option journal)',
      );
    }
    return {
      id: value,
      mode: grant.mode,
      tag: grant.tag,
      start: grant.start,
      end: grant.end,
      instance: grant.instance,
      term: grant.term,
      grantedAt: grant.grantedAt,
      database: grant.source ?? null,
    };
  }

  private async snowflakeOrigin(id: bigint): Promise<SnowflakeIdOrigin> {
    const snowflake = this.snowflake;
    const settings = this.options.snowflake;
    if (!snowflake || !settings) throw new ModeDisabledError('snowflake');
    const decoded = snowflake.decode(id);
    const kind = snowflake.workerIdSource.kind;
    const base = {
      id,
      mode: 'snowflake' as const,
      timestamp: decoded.timestamp,
      workerId: decoded.workerId,
      dataCenterId: decoded.dataCenterId,
      sequence: decoded.sequence,
      workerSource: (kind === 'embedded' ? 'explicit' : kind) as WorkerIdSource,
      instance: null,
      holder: null,
      run: null,
      epoch: null,
      claimedAt: null,
      until: null,
      note: null,
    };
    if (decoded.dataCenterId !== settings.dataCenterId) {
      return {
        ...base,
        note: `data centre ${decoded.dataCenterId}, not this one's (${settings.dataCenterId}): ask an instance there`,
      };
    }
    const holding = await snowflake.workerIdSource.holderAt(
      this.options.name,
      decoded.workerId,
      decoded.timestamp,
    );
    if ('unknown' in holding) throw new IdOriginUnknownError(id.toString(), holding.unknown);
    return { ...base, ...holding };
  }
}
