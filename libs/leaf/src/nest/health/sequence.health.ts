import { Injectable } from '@nestjs/common';
import { SequenceService } from '../sequence/sequence.service';
import { modeHealthIndicator, type ModeHealth } from './health-dependencies';

/**
 * Readiness of sequence mode: up exactly while this instance can serve every group's keys now
 * (`SequenceService.readiness`): ZooKeeper connected, every group with an issuer that issues,
 * and that issuer answering this instance. Never throws; a disabled mode reports up with
 * `enabled: false`.
 */
@Injectable()
export class SequenceHealthIndicator extends modeHealthIndicator('sequence', SequenceService) {
  protected override check(sequence: SequenceService): ModeHealth {
    const { ready, reason, coordination, ...rest } = sequence.readiness();
    const issuing = sequence
      .stats()
      .groups.filter((g) => g.state === 'issuer')
      .map((g) => g.group);
    const details = { coordination: coordination ?? null, issuing, ...rest };
    return { ready, reason: reason ?? null, details };
  }
}
