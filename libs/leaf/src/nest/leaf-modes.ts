import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { LEAF_MODE_NAMES, type LeafMode } from '../core/id.service';
import type {
  LeafModuleOptions,
  ResolvedLeafOptions,
  ResolvedSegmentOptions,
} from './leaf-options.interface';

export { LEAF_MODE_NAMES };

/**
 * The modes `options` switch on, as the resolver reads them: segment unless `false` or
 * `enabled: false`; snowflake and sequence only when given and not switched off.
 */
export function enabledModes(options: LeafModuleOptions): LeafMode[] {
  return LEAF_MODE_NAMES.filter((mode) => {
    const raw = options[mode];
    if (raw === false || raw?.enabled === false) return false;
    return mode === 'segment' || raw !== undefined;
  });
}

/**
 * The modes `LeafModule` registers providers for, checked before anything is built.
 * @throws {LeafConfigurationError} for an unknown mode.
 */
export function checkedModes(modes: readonly LeafMode[]): LeafMode[] {
  const unknown = modes.filter((mode) => !LEAF_MODE_NAMES.includes(mode));
  const problems = unknown.map(
    (mode) => `modes: "${String(mode)}" is not a mode (segment, snowflake, sequence)`,
  );
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return LEAF_MODE_NAMES.filter((mode) => modes.includes(mode));
}

/**
 * The problem when the resolved options switch on other modes than the module registered
 * (`forRootAsync`'s `modes`), or `null`.
 */
export function modesProblem(
  options: ResolvedLeafOptions,
  registered: readonly LeafMode[],
): string | null {
  const configured = LEAF_MODE_NAMES.filter((mode) => options[mode] !== null);
  if (configured.join() === registered.join()) return null;
  const list = (modes: readonly LeafMode[]) =>
    modes.length === 0 ? 'none' : `[${modes.map((mode) => `'${mode}'`).join(', ')}]`;
  return `modes: LeafModule.forRootAsync registered ${list(registered)} but the options switch on ${list(configured)}; list exactly the modes the factory's options enable`;
}

/**
 * A mode's resolved options in a service of that mode (the module registers the service only
 * with its mode on).
 * @throws {LeafConfigurationError} when the service was built without its mode.
 */
export function modeOptions<M extends LeafMode>(
  options: ResolvedLeafOptions,
  mode: M,
): NonNullable<ResolvedLeafOptions[M]> {
  const resolved = options[mode];
  if (resolved === null) {
    throw new LeafConfigurationError([`${mode}: the mode is off, so its service is not available`]);
  }
  return resolved as NonNullable<ResolvedLeafOptions[M]>;
}

/**
 * The database ranges come from: segment mode's, else sequence mode's own (`sequence.dataSource`
 * or `store`).
 * @throws {LeafConfigurationError} with neither mode on.
 */
export function rangeAllocation(
  options: ResolvedLeafOptions,
): ResolvedSegmentOptions['allocation'] {
  return options.segment?.allocation ?? modeOptions(options, 'sequence').allocation;
}
