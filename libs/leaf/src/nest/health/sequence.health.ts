import { Inject, Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { SequenceService } from '../sequence/sequence.service';
import { requireHealthDependencies } from './health-dependencies';

/**
 * Readiness of sequence mode: up exactly while this instance can serve every group's keys now
 * (`SequenceService.readiness`): ZooKeeper connected, every group with an issuer that issues,
 * and that issuer answering this instance. Never throws; a disabled mode reports up with
 * `enabled: false`.
 */
@Injectable()
export class SequenceHealthIndicator {
  private readonly health: HealthIndicatorService;
  private readonly sequence: SequenceService;

  /**
   * @throws {LeafConfigurationError} when provided in a module that sees no `SequenceService`
   *   or no `TerminusModule`.
   */
  constructor(
    @Optional() @Inject(HealthIndicatorService) health: HealthIndicatorService | null,
    @Optional() @Inject(SequenceService) sequence: SequenceService | null,
  ) {
    [this.health, this.sequence] = requireHealthDependencies(
      'SequenceHealthIndicator',
      health,
      'SequenceService',
      sequence,
    );
  }

  /** Terminus check under `key`. */
  isHealthy<const Key extends string = 'sequence'>(
    key: Key = 'sequence' as Key,
  ): HealthIndicatorResult<Key> {
    const indicator = this.health.check(key);
    try {
      if (!this.sequence.enabled) return indicator.up({ enabled: false });
      const { ready, reason, groupsWithoutIssuer, unreachableIssuers, advertiseChecked } =
        this.sequence.readiness();
      const issuing = this.sequence
        .stats()
        .groups.filter((g) => g.state === 'issuer')
        .map((g) => g.group);
      const details = { issuing, groupsWithoutIssuer, unreachableIssuers, advertiseChecked };
      return ready ? indicator.up(details) : indicator.down({ ...details, message: reason });
    } catch (error) {
      return indicator.down({ message: error instanceof Error ? error.message : String(error) });
    }
  }
}
