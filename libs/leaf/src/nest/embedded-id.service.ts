import { Inject, Injectable, Optional } from '@nestjs/common';
import { ModeDisabledError } from '../core/errors/mode-disabled.error';
import { OpaqueIds } from '../core/formats/opaque-ids';
import { IdService, type LeafMode } from '../core/id.service';
import type { SnowflakeLayout } from '../core/snowflake/snowflake-layout';
import { SegmentService } from './segment/segment.service';
import { SequenceService } from './sequence/sequence.service';
import { SnowflakeService } from './snowflake/snowflake.service';

/** What each mode's service answers the facade. */
type ModeIds = Pick<SegmentService, 'get' | 'getIds'>;

/**
 * The in-process {@link IdService} of `LeafModule`: a facade over the modes' services for
 * callers that pick the mode at run time; a mode that is off (its service not registered)
 * answers `ModeDisabledError`. Inject `IdService` (this class is provided under that token);
 * inject a mode's own service for its other calls, `BusinessNumberService` for business numbers.
 */
@Injectable()
export class EmbeddedIdService extends IdService {
  private readonly modes: Readonly<Record<LeafMode, ModeIds | null>>;

  constructor(
    @Optional() segment?: SegmentService,
    @Optional() private readonly snowflake?: SnowflakeService,
    @Optional() sequence?: SequenceService,
    @Optional() @Inject(OpaqueIds) private readonly opaque?: OpaqueIds | null,
  ) {
    super();
    this.modes = {
      segment: segment ?? null,
      snowflake: snowflake ?? null,
      sequence: sequence ?? null,
    };
  }

  /**
   * One ID from `mode` for `key`.
   * @throws {ModeDisabledError} when the mode is off.
   * @throws {LeafError} see the mode service's own methods.
   */
  get(mode: LeafMode, key: string): Promise<bigint> {
    const service = this.modes[mode];
    return service ? service.get(key) : Promise.reject(new ModeDisabledError(mode));
  }

  /**
   * `count` IDs from `mode` for `key`.
   * @throws {ModeDisabledError} when the mode is off.
   * @throws {LeafError} see the mode service's own methods.
   */
  getIds(mode: LeafMode, key: string, count: number): Promise<bigint[]> {
    const service = this.modes[mode];
    return service ? service.getIds(key, count) : Promise.reject(new ModeDisabledError(mode));
  }

  /** This process's snowflake layout (what `getTexts` makes UUIDv7 and TypeID with). */
  protected override layoutOf(mode: LeafMode): SnowflakeLayout | null {
    return mode === 'snowflake' ? (this.snowflake?.layout ?? null) : null;
  }

  /** The module's key ring (option `opaque.keys`), what `getTexts` writes opaque IDs with. */
  protected override opaqueIds(): OpaqueIds | null {
    return this.opaque ?? null;
  }
}
