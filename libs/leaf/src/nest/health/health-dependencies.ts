import type { HealthIndicatorService } from '@nestjs/terminus';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';

/**
 * The dependencies of a health indicator, or one error saying how to provide them: Nest's
 * own message ("can't resolve dependencies") names the missing class but not the module
 * that exports it.
 */
export function requireHealthDependencies<Service>(
  indicator: string,
  health: HealthIndicatorService | null | undefined,
  serviceName: string,
  service: Service | null | undefined,
): [HealthIndicatorService, Service] {
  const problems: string[] = [];
  if (!health) {
    problems.push(
      `${indicator} needs HealthIndicatorService: import TerminusModule (@nestjs/terminus) in the module that provides ${indicator}`,
    );
  }
  if (!service) {
    problems.push(
      `${indicator} needs ${serviceName}, which LeafModule exports: provide ${indicator} in a module that imports LeafModule.forRoot()/forRootAsync(), or register LeafModule once with { isGlobal: true }`,
    );
  }
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return [health!, service!];
}
