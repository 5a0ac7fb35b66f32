import { Injectable } from '@nestjs/common';
import { SegmentService } from './segment/segment.service';
import { SnowflakeService } from './snowflake/snowflake.service';

/** Generator modes. Each key is served by the mode that was asked for; there is no fallback between them. */
export type LeafMode = 'segment' | 'snowflake';

/**
 * Facade over the generators for controllers and other callers that pick the mode at run
 * time. Inject {@link SegmentService} directly for the per-tag handle and range calls.
 */
@Injectable()
export class IdService {
  constructor(
    readonly segment: SegmentService,
    readonly snowflake: SnowflakeService,
  ) {}

  /**
   * One ID from `mode` for `key`.
   * @throws {LeafError} see the generator's own methods.
   */
  next(mode: LeafMode, key: string): Promise<bigint> {
    switch (mode) {
      case 'segment':
        return this.segment.get(key);
      case 'snowflake':
        return this.snowflake.get(key);
    }
  }

  /**
   * `count` IDs from `mode` for `key`.
   * @throws {LeafError} see the generator's own methods.
   */
  nextMany(mode: LeafMode, key: string, count: number): Promise<bigint[]> {
    switch (mode) {
      case 'segment':
        return this.segment.getIds(key, count);
      case 'snowflake':
        return this.snowflake.getIds(count, key);
    }
  }
}
