import { Inject, Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { SegmentService } from '../segment/segment.service';
import { requireHealthDependencies } from './health-dependencies';

/**
 * Readiness of segment mode: up when the tag list has been loaded (requests can be served
 * now), down while shutting down, and down ahead of a database outage's end of the road:
 * once the last allocation failed, while a tag in use has less than `readinessRunwayMs` of
 * IDs left in memory at its recent rate (IDs are still served, so the load balancer moves
 * traffic away before they run out). Never throws; a disabled mode reports up with
 * `enabled: false`.
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
      const readiness = this.segments.readiness();
      // The tags that matter first: failing ones, then the shortest runways; at most 20.
      const tags = readiness.tags
        .filter((t) => t.failures > 0 || t.runwayMs !== null)
        .sort(
          (a, b) => b.failures - a.failures || (a.runwayMs ?? Infinity) - (b.runwayMs ?? Infinity),
        )
        .slice(0, 20);
      const details = {
        tags: readiness.tags.length,
        allocationFailing: readiness.allocationFailing,
        lastAllocationError: readiness.lastAllocationError,
        runway: tags,
        // `off` (segment-only protection), `on`, or `unavailable` (allocations refused).
        highWater: readiness.highWater?.state ?? 'off',
        highWaterRepairs: readiness.highWater?.repairs ?? [],
        // Several databases: each one's state, and what their tables disagree on.
        ...(readiness.databases ? { databases: readiness.databases } : {}),
      };
      if (!readiness.ready) return indicator.down({ ...details, message: readiness.reason });
      return indicator.up(details);
    } catch (error) {
      return indicator.down({ message: error instanceof Error ? error.message : String(error) });
    }
  }
}
