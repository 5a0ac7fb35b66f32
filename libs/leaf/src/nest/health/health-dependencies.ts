import { Inject, Optional, type Type } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import type { LeafMode } from '../../core/id.service';
import { LEAF_RESOLVED_OPTIONS } from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { messageOf } from '../../core/errors/leaf.error';

/** A mode's readiness as an indicator reports it. */
export interface ModeHealth {
  readonly ready: boolean;
  readonly reason: string | null;
  readonly details: Record<string, unknown>;
}

/**
 * The terminus indicator of one mode (or of gapless series): up with `enabled: false` when the mode is off (its
 * service is not provided), else up or down with the mode's details. Never throws.
 */
export abstract class ModeHealthIndicator<Service, DefaultKey extends string> {
  private readonly health: HealthIndicatorService;
  private readonly service: Service | null;

  /**
   * @throws {LeafConfigurationError} when provided in a module that does not see `LeafModule`
   *   (it does not import it, and it is not `isGlobal`) or no `TerminusModule`.
   */
  protected constructor(
    private readonly mode: DefaultKey & (LeafMode | 'gapless'),
    health: HealthIndicatorService | null | undefined,
    options: ResolvedLeafOptions | null | undefined,
    service: Service | null | undefined,
  ) {
    const indicator = `${mode[0]!.toUpperCase()}${mode.slice(1)}HealthIndicator`;
    const problems: string[] = [];
    if (!health) {
      problems.push(
        `${indicator} needs HealthIndicatorService: import TerminusModule (@nestjs/terminus) in the module that provides ${indicator}`,
      );
    }
    if (!options) {
      problems.push(
        `${indicator} needs LeafModule's services: provide ${indicator} in a module that imports LeafModule.forRoot()/forRootAsync(), or register LeafModule once with { isGlobal: true }`,
      );
    }
    if (problems.length > 0) throw new LeafConfigurationError(problems);
    this.health = health!;
    this.service = service ?? null;
  }

  /** The mode's readiness and details; may throw (reported down). */
  protected abstract check(service: Service): ModeHealth;

  /** Terminus check under `key` (the mode's name by default). */
  isHealthy<const Key extends string = DefaultKey>(
    key: Key = this.mode as unknown as Key,
  ): HealthIndicatorResult<Key> {
    const indicator = this.health.check(key);
    if (this.service === null) return indicator.up({ enabled: false });
    try {
      const { ready, reason, details } = this.check(this.service);
      return ready ? indicator.up(details) : indicator.down({ ...details, message: reason });
    } catch (error) {
      return indicator.down({ message: messageOf(error) });
    }
  }
}

/**
 * The base of `mode`'s indicator: a {@link ModeHealthIndicator} that Nest builds with
 * terminus's `HealthIndicatorService`, Leaf's options and `service`, each optional (a missing
 * one is reported by the constructor, or turns the mode off). The subclass adds `check`.
 */
export function modeHealthIndicator<Service, Mode extends LeafMode | 'gapless'>(
  mode: Mode,
  service: Type<Service>,
): abstract new (
  health: HealthIndicatorService | null,
  options: ResolvedLeafOptions | null,
  service: Service | null,
) => ModeHealthIndicator<Service, Mode> {
  abstract class Indicator extends ModeHealthIndicator<Service, Mode> {
    constructor(
      @Optional() @Inject(HealthIndicatorService) health: HealthIndicatorService | null,
      @Optional() @Inject(LEAF_RESOLVED_OPTIONS) options: ResolvedLeafOptions | null,
      @Optional() @Inject(service) instance: Service | null,
    ) {
      super(mode, health, options, instance);
    }
  }
  return Indicator;
}
