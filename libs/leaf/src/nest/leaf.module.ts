import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { OpaqueIds } from '../core/formats/opaque-ids';
import { IdService, type LeafMode } from '../core/id.service';
import { NUMBER_MODES } from '../core/numbers/number-format';
import { EmbeddedIdService } from './embedded-id.service';
import { GAPLESS_EXPORTS, GAPLESS_PROVIDERS } from './gapless/gapless.providers';
import type { ResolvedGaplessOptions } from './gapless/gapless-options';
import {
  LEAF_GAPLESS_OPTIONS,
  LEAF_MODES,
  LEAF_RESOLVED_OPTIONS,
  LEAF_SCHEDULER,
  LEAF_ZK_CLIENT_FACTORY,
} from './leaf.constants';
import {
  LeafConfigurableModuleClass,
  LEAF_MODULE_OPTIONS,
  type LEAF_ASYNC_OPTIONS_TYPE,
  type LEAF_OPTIONS_TYPE,
} from './leaf.module-definition';
import type { LeafModuleOptions, ResolvedLeafOptions } from './leaf-options.interface';
import { resolveLeafOptions } from './leaf-options.resolver';
import { checkedModes, enabledModes, modesProblem } from './leaf-modes';
import { LeafEventRecorder } from './metrics/leaf-event.recorder';
import { LeafMetricsCollector } from './metrics/leaf-metrics.collector';
import { LeafTracing } from './telemetry/leaf-tracing';
import {
  BUSINESS_NUMBER_EXPORTS,
  BUSINESS_NUMBER_PROVIDERS,
} from './numbers/business-number.providers';
import {
  ALLOCATION_PROVIDERS,
  SEGMENT_EXPORTS,
  SEGMENT_PROVIDERS,
} from './segment/segment.providers';
import { SEQUENCE_EXPORTS, SEQUENCE_PROVIDERS } from './sequence/sequence.providers';
import { IdWhoisService } from './journal/id-whois.service';
import { SNOWFLAKE_EXPORTS, SNOWFLAKE_PROVIDERS } from './snowflake/snowflake.providers';
import { defaultZkClientFactory } from './snowflake/zk-client.factory';

/** Each mode's providers and exports: a mode that is off registers none of them. */
const MODE_PROVIDERS: Record<LeafMode, { providers: Provider[]; exports: Provider[] }> = {
  segment: { providers: SEGMENT_PROVIDERS, exports: SEGMENT_EXPORTS },
  snowflake: { providers: SNOWFLAKE_PROVIDERS, exports: SNOWFLAKE_EXPORTS },
  sequence: { providers: SEQUENCE_PROVIDERS, exports: SEQUENCE_EXPORTS },
};

/** What every module registers, whatever its modes. */
const COMMON_PROVIDERS: Provider[] = [
  {
    provide: LEAF_RESOLVED_OPTIONS,
    useFactory: (
      raw: LeafModuleOptions,
      modes: LeafMode[],
      gapless: ResolvedGaplessOptions | undefined,
    ): ResolvedLeafOptions => {
      const resolved = resolveLeafOptions(raw);
      const problem = modesProblem(resolved, modes);
      if (problem !== null) throw new LeafConfigurationError([problem]);
      if (raw.gapless && !gapless)
        throw new LeafConfigurationError([
          'gapless: LeafModule.forRootAsync registered no gapless series: pass gapless: true next to useFactory',
        ]);
      return resolved;
    },
    inject: [LEAF_MODULE_OPTIONS, LEAF_MODES, { token: LEAF_GAPLESS_OPTIONS, optional: true }],
  },
  {
    // The jobs' SchedulerRegistry, or one error saying what to do: Nest's own message
    // ("can't resolve dependencies of TagRefreshJob") does not name ScheduleModule.
    provide: LEAF_SCHEDULER,
    useFactory: (registry: SchedulerRegistry | undefined): SchedulerRegistry => {
      if (!registry) {
        throw new LeafConfigurationError([
          'LeafModule registers its periodic jobs in SchedulerRegistry, which is missing: import ScheduleModule.forRoot() (@nestjs/schedule) exactly once, in the application module (LeafModule never calls forRoot() itself)',
        ]);
      }
      return registry;
    },
    inject: [{ token: SchedulerRegistry, optional: true }],
  },
  { provide: LEAF_ZK_CLIENT_FACTORY, useValue: defaultZkClientFactory },
  // The key ring of opaque IDs (option opaque.keys); null without keys.
  {
    provide: OpaqueIds,
    useFactory: (options: ResolvedLeafOptions) => options.opaque,
    inject: [LEAF_RESOLVED_OPTIONS],
  },
  EmbeddedIdService,
  { provide: IdService, useExisting: EmbeddedIdService },
  LeafEventRecorder,
  LeafMetricsCollector,
  LeafTracing,
  IdWhoisService,
];

const COMMON_EXPORTS = [
  IdService,
  OpaqueIds,
  EmbeddedIdService,
  LEAF_RESOLVED_OPTIONS,
  LeafMetricsCollector,
  LeafTracing,
  IdWhoisService,
];

/** What `LeafModule.forRootAsync()` takes: the factory, and the modes its options switch on. */
export type LeafModuleAsyncOptions = typeof LEAF_ASYNC_OPTIONS_TYPE & {
  /**
   * The modes the factory's options switch on: each registers its providers (and its
   * service) only when listed. Checked against the options when they resolve.
   * @default ['segment']
   */
  modes?: readonly LeafMode[];
  /**
   * Registers `GaplessNumberService`: the factory's options must then have `gapless`.
   * @default false
   */
  gapless?: boolean;
};

/** The module `definition` with the providers and exports of `modes` (and gapless series) added. */
function withModes(
  definition: DynamicModule,
  modes: readonly LeafMode[],
  gapless: boolean,
): DynamicModule {
  const registered = checkedModes(modes);
  const own = registered.map((mode) => MODE_PROVIDERS[mode]);
  // The allocation store and business numbers: their own sets, with any mode taking ranges.
  if (registered.some((mode) => (NUMBER_MODES as readonly LeafMode[]).includes(mode))) {
    own.push({
      providers: [...ALLOCATION_PROVIDERS, ...BUSINESS_NUMBER_PROVIDERS],
      exports: BUSINESS_NUMBER_EXPORTS,
    });
  }
  if (gapless) own.push({ providers: GAPLESS_PROVIDERS, exports: GAPLESS_EXPORTS });
  return {
    ...definition,
    providers: [
      ...(definition.providers ?? []),
      { provide: LEAF_MODES, useValue: registered },
      ...COMMON_PROVIDERS,
      ...own.flatMap((mode) => mode.providers),
    ],
    exports: [
      ...(definition.exports ?? []),
      ...COMMON_EXPORTS,
      ...own.flatMap((mode) => mode.exports),
    ],
  };
}

/**
 * Leaf's ID generators as a Nest module. Each mode registers its providers only when it is
 * on: `forRoot()` reads the modes from its options, `forRootAsync()` from `modes` (segment
 * alone by default), checked against the options when the factory has run. The service of a
 * mode that is off is not provided (inject it `@Optional()` where a mode may be off).
 *
 * ```ts
 * LeafModule.forRootAsync({
 *   imports: [DatabaseModule],
 *   inject: [DataSource],
 *   useFactory: (dataSource: DataSource) => ({ segment: { dataSource } }),
 * })
 * ```
 *
 * The application must import `ScheduleModule.forRoot()` once: the module registers its
 * periodic jobs in `SchedulerRegistry` and never calls `forRoot()` itself.
 *
 * The terminus indicators (`nestjs-leaf/health`) are not part of this module, so that an
 * application without health checks never loads `@nestjs/terminus`: provide them in a module
 * that imports `TerminusModule` and sees `LeafModule`'s services.
 */
@Module({})
export class LeafModule extends LeafConfigurableModuleClass {
  static override forRoot(options: typeof LEAF_OPTIONS_TYPE): DynamicModule {
    return withModes(super.forRoot(options), enabledModes(options), options.gapless !== undefined);
  }

  static override forRootAsync(options: LeafModuleAsyncOptions): DynamicModule {
    const { modes = ['segment'], gapless = false, ...rest } = options;
    return withModes(super.forRootAsync(rest), modes, gapless);
  }
}
