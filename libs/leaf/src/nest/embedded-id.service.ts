import { Injectable } from '@nestjs/common';
import { IdService, type LeafMode } from '../core/id.service';
import { SegmentService } from './segment/segment.service';
import { SequenceService } from './sequence/sequence.service';
import { SnowflakeService } from './snowflake/snowflake.service';

/**
 * The in-process {@link IdService} of `LeafModule`: a facade over the generators for
 * controllers and other callers that pick the mode at run time. Inject `IdService` (this
 * class is provided under that token); inject {@link SegmentService} directly for the
 * per-key handle and range calls.
 */
@Injectable()
export class EmbeddedIdService extends IdService {
  constructor(
    readonly segment: SegmentService,
    readonly snowflake: SnowflakeService,
    readonly sequence: SequenceService,
  ) {
    super();
  }

  /**
   * One ID from `mode` for `key`.
   * @throws {LeafError} see the generator's own methods.
   */
  get(mode: LeafMode, key: string): Promise<bigint> {
    switch (mode) {
      case 'segment':
        return this.segment.get(key);
      case 'snowflake':
        return this.snowflake.get(key);
      case 'sequence':
        return this.sequence.get(key);
    }
  }

  /**
   * `count` IDs from `mode` for `key`.
   * @throws {LeafError} see the generator's own methods.
   */
  getIds(mode: LeafMode, key: string, count: number): Promise<bigint[]> {
    switch (mode) {
      case 'segment':
        return this.segment.getIds(key, count);
      case 'snowflake':
        return this.snowflake.getIds(key, count);
      case 'sequence':
        return this.sequence.getIds(key, count);
    }
  }
}
