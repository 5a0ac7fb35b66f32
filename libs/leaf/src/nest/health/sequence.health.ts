import { Inject, Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { LEAF_RESOLVED_OPTIONS } from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { SequenceService } from '../sequence/sequence.service';
import { ModeHealthIndicator, type ModeHealth } from './health-dependencies';

/**
 * Readiness of sequence mode: up exactly while this instance can serve every group's keys now
 * (`SequenceService.readiness`): ZooKeeper connected, every group with an issuer that issues,
 * and that issuer answering this instance. Never throws; a disabled mode reports up with
 * `enabled: false`.
 */
@Injectable()
export class SequenceHealthIndicator extends ModeHealthIndicator<SequenceService, 'sequence'> {
  constructor(
    @Optional() @Inject(HealthIndicatorService) health: HealthIndicatorService | null,
    @Optional() @Inject(LEAF_RESOLVED_OPTIONS) options: ResolvedLeafOptions | null,
    @Optional() @Inject(SequenceService) sequence: SequenceService | null,
  ) {
    super('sequence', health, options, sequence);
  }

  protected check(sequence: SequenceService): ModeHealth {
    const {
      ready,
      reason,
      coordination,
      groupsWithoutIssuer,
      unreachableIssuers,
      advertiseChecked,
    } = sequence.readiness();
    const issuing = sequence
      .stats()
      .groups.filter((g) => g.state === 'issuer')
      .map((g) => g.group);
    const details = {
      coordination: coordination ?? null,
      issuing,
      groupsWithoutIssuer,
      unreachableIssuers,
      advertiseChecked,
    };
    return { ready, reason: reason ?? null, details };
  }
}
