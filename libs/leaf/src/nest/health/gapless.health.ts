import { Injectable } from '@nestjs/common';
import { GaplessNumberService } from '../gapless/gapless-number.service';
import { modeHealthIndicator, type ModeHealth } from './health-dependencies';

/**
 * Readiness of gapless series: up exactly while this instance can serve them — the gapless
 * tables answered its last call (a reservation's transaction or the expiry sweep, which runs
 * every `sweepIntervalMs`); down before the first answer, from a call that could not reach
 * them until one that did, and while shutting down. Never throws; without the `gapless`
 * option it reports up with `enabled: false`.
 */
@Injectable()
export class GaplessHealthIndicator extends modeHealthIndicator('gapless', GaplessNumberService) {
  protected override check(gapless: GaplessNumberService): ModeHealth {
    const { ready, reason } = gapless.readiness();
    return { ready, reason, details: {} };
  }
}
