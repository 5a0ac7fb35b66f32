import { Injectable } from '@nestjs/common';
import { SegmentService } from './segment/segment.service';
import { SnowflakeService } from './snowflake/snowflake.service';

/** Generator modes. Each key is served by the mode that was asked for; there is no fallback between them. */
export type LeafMode = 'segment' | 'snowflake';

/**
 * Facade over the generators for controllers and other callers that pick the mode at run
 * time. Inject {@link SegmentService} directly for the per-key handle and range calls.
 *
 * One vocabulary across the library: a `key` names what IDs are for (a segment tag, the
 * `biz_tag` row; ignored by snowflake, as in Leaf); `get(key)` waits when it must,
 * `getSync(key)` never waits, `getIds(key, count)` returns a batch.
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
  get(mode: LeafMode, key: string): Promise<bigint> {
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
  getIds(mode: LeafMode, key: string, count: number): Promise<bigint[]> {
    switch (mode) {
      case 'segment':
        return this.segment.getIds(key, count);
      case 'snowflake':
        return this.snowflake.getIds(key, count);
    }
  }
}
