import { Inject, Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { SegmentService } from '../segment/segment.service';
import { requireHealthDependencies } from './health-dependencies';

/**
 * Readiness of segment mode: up when the tag list has been loaded (requests can be served
 * now). Never throws; a disabled mode reports up with `enabled: false`.
 */
@Injectable()
export class SegmentHealthIndicator {
  private readonly health: HealthIndicatorService;
  private readonly segments: SegmentService;

  /**
   * @throws {LeafConfigurationError} when provided in a module that sees no `SegmentService`
   *   (it does not import `LeafModule`, which is not `isGlobal`) or no `TerminusModule`.
   */
  constructor(
    @Optional() @Inject(HealthIndicatorService) health: HealthIndicatorService | null,
    @Optional() @Inject(SegmentService) segments: SegmentService | null,
  ) {
    [this.health, this.segments] = requireHealthDependencies(
      'SegmentHealthIndicator',
      health,
      'SegmentService',
      segments,
    );
  }

  /** Terminus check under `key`. */
  isHealthy<const Key extends string = 'segment'>(
    key: Key = 'segment' as Key,
  ): HealthIndicatorResult<Key> {
    const indicator = this.health.check(key);
    try {
      if (!this.segments.enabled) return indicator.up({ enabled: false });
      const snapshot = this.segments.snapshot();
      const failing = snapshot.buffers
        .filter((buffer) => buffer.lastError !== null)
        .map((buffer) => buffer.tag);
      if (!snapshot.initialized) return indicator.down({ message: 'tag list not loaded' });
      return indicator.up({
        tags: snapshot.buffers.length,
        lastRefreshAt: snapshot.lastRefreshAt,
        failing,
      });
    } catch (error) {
      return indicator.down({ message: error instanceof Error ? error.message : String(error) });
    }
  }
}
