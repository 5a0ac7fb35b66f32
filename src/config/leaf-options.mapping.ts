import { hostname } from 'node:os';
import type { DataSource } from 'typeorm';
import {
  type LeafModuleOptions,
  type LeafSegmentOptions,
  type LeafSequenceOptions,
  type LeafSnowflakeOptions,
} from 'nestjs-leaf';
import {
  LEAF_OPTION_RULES,
  resolveLeafOptions,
  SNOWFLAKE_LAYOUTS,
  type ResolvedLeafOptions,
  type SnowflakeLayoutSpec,
} from 'nestjs-leaf/server';
import type { AppConfig } from './app-config';
import type { AppDataSources } from '../database/database.module';

/**
 * The library's `snowflake.layout` option for the configured layout: the named one, or with
 * `LEAF_SNOWFLAKE_DATA_CENTER_BITS` its worker field split into data-centre and worker bits.
 * `undefined` when neither is set (the library's default layout).
 */
export function snowflakeLayoutOption(
  layout: 'leaf' | 'js-safe' | undefined,
  dataCenterBits: number,
): 'leaf' | 'js-safe' | SnowflakeLayoutSpec | undefined {
  if (dataCenterBits === 0) return layout;
  const named = SNOWFLAKE_LAYOUTS[layout ?? LEAF_OPTION_RULES['snowflake.layout'].default];
  return {
    ...named,
    dataCenterBits,
    workerBits: named.workerBits - dataCenterBits,
  };
}

/**
 * Maps the application's configuration to the library's options: exactly the options the
 * operator set (an unset variable is not passed on, so the library's default applies), plus
 * the development defaults of `APP_DEFAULT_DIFFERENCES` (./app-env.ts).
 */
export function toLeafOptions(
  config: AppConfig,
  { dataSource = null, dataSources, highWater, region }: Partial<AppDataSources> = {},
): LeafModuleOptions {
  const options: Record<string, unknown> = {};
  for (const [path, value] of Object.entries(config.options)) setPath(options, path, value);
  const snowflake = (options.snowflake ?? {}) as LeafSnowflakeOptions & Record<string, unknown>;
  const layout = snowflakeLayoutOption(
    snowflake.layout as 'leaf' | 'js-safe' | undefined,
    config.snowflake.dataCenterBits,
  );
  if (layout !== undefined) snowflake.layout = layout;
  switch (config.snowflake.workerSource) {
    case 'hostname': {
      // The ordinal source takes the offset; ZooKeeper (if set) guards it, with no advertise.
      const { offset } = (snowflake.ordinal ?? {}) as { offset?: number };
      snowflake.ordinal = offset === undefined ? true : { offset };
      break;
    }
    case 'database':
      // Worker IDs leased from the database (leaf_worker_lease).
      snowflake.database = {
        ...(snowflake.database as object | undefined),
        ...(dataSource ? { dataSource } : {}),
      };
      delete snowflake.ordinal;
      break;
    case 'embedded-default':
      // APP_DEFAULT_DIFFERENCES: worker 0 for one process on a developer machine.
      snowflake.workerId = 0;
      delete snowflake.ordinal;
      break;
    default:
      delete snowflake.ordinal;
  }
  // LEAF_REGION_DB_URL: the region registry leasing the data-centre ID.
  if (snowflake.region && region) snowflake.region = { ...snowflake.region, dataSource: region };
  const segment = (options.segment ?? {}) as LeafSegmentOptions;
  // LEAF_SEGMENT_HIGH_WATER_DB_URL: the marks in a database of their own.
  if (highWater) segment.highWater = { ...segment.highWater, dataSource: highWater } as never;
  // Sequence mode is off in the library unless given: passed on only when switched on.
  const { sequence, ...rest } = options;
  // The journal's identity by default: snowflake's advertised `ip:port`, sequence's `host:port`.
  const advertised = config.snowflake.enabled ? snowflake.advertise : undefined;
  const forwarded = config.sequence.enabled
    ? (sequence as LeafSequenceOptions | undefined)?.advertise?.replace(/^https?:\/\//, '')
    : undefined;
  return {
    ...rest,
    // APP_DEFAULT_DIFFERENCES: the ID journal on (the app's migrations ship its tables), under
    // the address the instance advertises, else its host name and port.
    journal: (rest.journal as boolean | undefined) ?? true,
    instance:
      (rest.instance as string | undefined) ??
      advertised ??
      forwarded ??
      `${hostname()}:${config.port}`,
    segment: !config.segment.enabled
      ? false
      : dataSources
        ? { ...segment, dataSources: [...dataSources] }
        : dataSource
          ? { ...segment, dataSource }
          : false,
    snowflake: config.snowflake.enabled ? snowflake : false,
    // LEAF_GAPLESS: gapless series in segment mode's one database.
    ...(config.gapless.enabled && dataSource ? { gapless: { dataSource } } : {}),
    ...(config.sequence.enabled
      ? {
          sequence: {
            ...(sequence as LeafSequenceOptions),
            // Segment mode off: sequence mode takes its ranges from the database itself.
            ...(!config.segment.enabled && dataSource ? { dataSource } : {}),
            // LEAF_INTERNAL_*: this instance calls the others' TLS listeners with its certificate.
            ...(config.internal ? { tls: config.internal.tls } : {}),
          },
        }
      : {}),
  };
}

/** Sets `a.b.c` of `target` to `value`, creating the objects on the way. */
function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

/**
 * The options the library runs with for `config` (defaults applied, validated), for tools
 * that need the effective values without starting the application: the CLI, deployment
 * checks. Segment mode is left out (it needs an open database).
 * @throws {LeafConfigurationError} as `LeafModule` would at start.
 */
export function effectiveLeafOptions(config: AppConfig): ResolvedLeafOptions {
  // Stores over a database (worker leases, the region registry) are built but never called
  // here: stand-ins with the configured drivers are enough (no connection is opened).
  const standIn = { options: { type: config.segment.database.type } } as unknown as DataSource;
  const region = config.snowflake.region;
  return resolveLeafOptions({
    ...toLeafOptions(config, {
      dataSource: standIn,
      region: region && ({ options: { type: region.type } } as unknown as DataSource),
    }),
    segment: false,
    sequence: false,
  });
}
