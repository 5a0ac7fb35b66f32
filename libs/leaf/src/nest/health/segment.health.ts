import { Injectable } from '@nestjs/common';
import { SegmentService } from '../segment/segment.service';
import { modeHealthIndicator, type ModeHealth } from './health-dependencies';

/**
 * Readiness of segment mode: up when the tag list has been loaded (requests can be served
 * now), down while shutting down, and down ahead of a database outage's end of the road:
 * once the last allocation failed, while a tag in use has less than `readinessRunwayMs` of
 * IDs left in memory at its recent rate (IDs are still served, so the load balancer moves
 * traffic away before they run out). Never throws; a disabled mode reports up with
 * `enabled: false`.
 */
@Injectable()
export class SegmentHealthIndicator extends modeHealthIndicator('segment', SegmentService) {
  protected override check(segments: SegmentService): ModeHealth {
    const readiness = segments.readiness();
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
      // Where the marks live: `zookeeper` or `database`, and its znode or host:port/database.
      highWaterStore: readiness.highWater?.store ?? null,
      highWaterAt: readiness.highWater?.root ?? null,
      highWaterRepairs: readiness.highWater?.repairs ?? [],
      // Several databases: each one's state, and what their tables disagree on.
      ...(readiness.databases ? { databases: readiness.databases } : {}),
    };
    return { ready: readiness.ready, reason: readiness.reason ?? null, details };
  }
}
