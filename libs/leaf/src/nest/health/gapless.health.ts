import { Inject, Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { GaplessNumberService } from '../gapless/gapless-number.service';
import { LEAF_RESOLVED_OPTIONS } from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { ModeHealthIndicator, type ModeHealth } from './health-dependencies';

/**
 * Readiness of gapless series: up exactly while this instance can serve them — the gapless
 * tables answered its last call (a reservation's transaction or the expiry sweep, which runs
 * every `sweepIntervalMs`); down before the first answer, from a call that could not reach
 * them until one that did, and while shutting down. Never throws; without the `gapless`
 * option it reports up with `enabled: false`.
 */
@Injectable()
export class GaplessHealthIndicator extends ModeHealthIndicator<GaplessNumberService, 'gapless'> {
  constructor(
    @Optional() @Inject(HealthIndicatorService) health: HealthIndicatorService | null,
    @Optional() @Inject(LEAF_RESOLVED_OPTIONS) options: ResolvedLeafOptions | null,
    @Optional() @Inject(GaplessNumberService) gapless: GaplessNumberService | null,
  ) {
    super('gapless', health, options, gapless);
  }

  protected check(gapless: GaplessNumberService): ModeHealth {
    const { ready, reason } = gapless.readiness();
    return { ready, reason, details: {} };
  }
}
