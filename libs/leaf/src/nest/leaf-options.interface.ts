import type { DataSource } from 'typeorm';
import type { Clock } from '../core/clock';
import type { LeafAllocStore } from '../core/segment/leaf-alloc-store.port';
import type { OpaqueIds } from '../core/formats/opaque-ids';
import type { RegionLeaseSettings } from '../core/snowflake/region-lease';
import type { RegionRegistry } from '../core/snowflake/region-registry.port';
import type { SnowflakeSettings, WorkerSourceSettings } from '../core/snowflake/snowflake-settings';
import type { LeafSnowflakeCoordinationOptions } from './leaf-snowflake-database.options';
import type { LeafHighWaterOptions, ResolvedHighWaterOptions } from './leaf-high-water-options';
import type { LeafGaplessOptions } from './gapless/gapless-options';
import type { LeafSequenceOptions, ResolvedSequenceOptions } from './sequence-options.interface';

/**
 * Options of {@link LeafModule}. Every field is optional; see each `@default`. The defaults
 * and ranges are written once, in `LEAF_OPTION_RULES` (core/leaf-option-rules.ts), which the
 * resolver applies; docs/configuration.md lists them, and a test holds these tags to them.
 */
export interface LeafModuleOptions {
  /**
   * Namespace of this deployment. Snowflake mode registers worker IDs under
   * `/snowflake/{name}` in ZooKeeper. 1-64 characters of `A-Z a-z 0-9 . _ -`.
   * @default 'leaf'
   */
  name?: string;
  /** Segment mode (database ranges). `false` switches it off. @default enabled, but needs `dataSource` or `store` */
  segment?: LeafSegmentOptions | false;
  /**
   * Snowflake mode (time-based IDs): on only with a worker-ID source (`zookeeper`,
   * `database`, `workerId`, `ordinal`). Left out, or `false`, it is off.
   * @default off
   */
  snowflake?: LeafSnowflakeOptions | false;
  /**
   * Sequence mode (IDs that increase across the whole cluster, docs/design.md "Sequence
   * mode"): ranges from segment mode's database, one issuer per key group elected through
   * ZooKeeper or a row of the database. Needs segment mode's `dataSource` or `store`,
   * `zookeeper` (or `coordination: 'database'`) and `advertise`.
   * @default off
   */
  sequence?: LeafSequenceOptions | false;
  /** Largest `count` accepted by the batch and range calls. @default 1000 */
  maxBatchSize?: number;
  /**
   * The ID journal (docs/design.md, "The ID journal"): each range this instance is granted
   * (segment and sequence mode) is written to `leaf_alloc_journal` in the allocation's own
   * transaction, and each worker ID it leases from the database to `leaf_worker_lease_journal`
   * in the claim's; `IdWhoisService` answers from them who issued an ID. Run the migration
   * `CreateLeafIdJournal1700000000006` (in `LEAF_MIGRATIONS`) on every allocation database
   * first: without the table every allocation fails.
   * @default false
   */
  journal?: boolean;
  /**
   * This instance's identity in the ID journal: something an operator can find the
   * instance by (a pod name, `host:port`), stable across restarts. 1-255 characters.
   * @default `snowflake.advertise`, else the `host:port` of `sequence.advertise`, else the host name
   */
  instance?: string;
  /** Time source; tests inject a fake one. @default systemClock */
  clock?: Clock;
  /**
   * Gapless series (docs/gapless.md): `GaplessNumberService` on one MySQL/MariaDB or
   * PostgreSQL `dataSource`, independent of the modes. Left out, there is no such service;
   * with `forRootAsync`, pass `gapless: true` there too.
   */
  gapless?: LeafGaplessOptions;
  /**
   * Opaque public IDs (docs/public-ids.md): the key ring of `?format=opaque`,
   * `IdService.getTexts(…, 'opaque')` and the injectable `OpaqueIds`. Left out, that format is
   * refused with `OpaqueDisabledError`.
   */
  opaque?: LeafOpaqueOptions;
}

/** Options of opaque public IDs. */
export interface LeafOpaqueOptions {
  /**
   * The keys, `v<1-52>:<base64 AES-128/192/256 key>`: the last one listed writes new IDs,
   * every one listed reads; a version left out is retired (its IDs are refused). Secrets:
   * never logged.
   * @default []
   */
  keys?: readonly string[];
}

/** Options of segment mode. */
export interface LeafSegmentOptions {
  /** @default true */
  enabled?: boolean;
  /**
   * An initialized TypeORM `DataSource` on MySQL/MariaDB (`mysql` driver, mysql2) or
   * SQLite (`better-sqlite3`) whose database has the `leaf_alloc` table. The caller owns
   * its lifecycle. Either this or `store` is required when segment mode is enabled.
   */
  dataSource?: DataSource;
  /** A custom allocation store, instead of `dataSource` (giving both is a configuration error). */
  store?: LeafAllocStore;
  /**
   * Several independent MySQL/MariaDB databases serving the same tags (docs/design.md,
   * "Several databases per tag"), instead of `dataSource`/`store`: each row's residue class
   * (`id_modulus`, `id_residue`, migration `AddLeafAllocResidueClass1700000000002`) says which
   * IDs of its ranges are served, each allocation goes to the next database that answers, and
   * the instance serves while any one does. A list of one is allowed (it reads the classes).
   * The caller owns their lifecycles.
   */
  dataSources?: DataSource[];
  /** Custom allocation stores serving the same tags, as `dataSources` (names `store-0`, …). */
  stores?: LeafAllocStore[];
  /**
   * With `dataSources`/`stores`: how long one database may take to answer before the next is
   * asked; a range that commits later is abandoned (a gap).
   * @default 1000
   */
  databaseTimeoutMs?: number;
  /** Upper bound of the dynamic step. @default 1000000 */
  maxStep?: number;
  /**
   * Largest `count` of `SegmentService.getRange` (the range route), separate from
   * `maxBatchSize`: a remote client (`nestjs-leaf/client`) takes whole ranges of up to its
   * own largest range size, which must not exceed this.
   * @default `maxStep` (1000000)
   */
  maxRangeCount?: number;
  /**
   * Target lifetime of one segment: a segment consumed faster doubles the step,
   * one that lasted more than twice as long halves it.
   * @default 900000 (15 minutes)
   */
  stepDurationMs?: number;
  /** Period of the tag-list refresh. @default 60000 */
  refreshIntervalMs?: number;
  /**
   * How long a request whose current segment is exhausted waits for the next range.
   * @default 3000
   */
  loadTimeoutMs?: number;
  /**
   * The next range is loaded once the current segment's remaining IDs fall below this
   * fraction of its step (Leaf: 0.9, i.e. after 10 % is used).
   * @default 0.9
   */
  preloadThreshold?: number;
  /** Most range loads in flight at once across all tags. @default 8 */
  maxConcurrentLoads?: number;
  /** Tags whose first segment is loaded at start instead of on their first request. @default [] */
  warmTags?: string[];
  /**
   * Readiness leads a database outage: once the most recent allocation failed, segment
   * readiness is down while any tag in use has less than this many milliseconds of IDs left
   * in memory at its recent issue rate (IDs are still served meanwhile). Give the load
   * balancer time to move traffic: a few probe periods. 0 turns the rule off.
   * @default 30000
   */
  readinessRunwayMs?: number;
  /**
   * At a graceful stop, hand back each tag's unused IDs: `max_id` is lowered to the first
   * unused ID when it is still exactly what this instance's newest allocation read back
   * (docs/design.md, segment invariants). Turn off while another service that assumes
   * `max_id` only grows reads the table.
   * @default true
   */
  handBackOnClose?: boolean;
  /**
   * The per-tag high-water mark, in ZooKeeper or a database of its own (docs/design.md,
   * "High-water mark"): with it a `max_id` lowered by hand, restored from a backup or rolled
   * back by a failover is found and repaired by the next allocation instead of re-issuing
   * IDs. Needs MySQL/MariaDB or PostgreSQL `dataSource`/`dataSources`. Without it only the in-memory range guard (and the database trigger of
   * `LEAF_MIGRATIONS`) protect against a lowered `max_id`. Off when left out.
   */
  highWater?: LeafHighWaterOptions;
}

/** ZooKeeper connection used to assign snowflake worker IDs. */
export interface LeafZookeeperOptions {
  /** Connect string, e.g. `127.0.0.1:2181,10.0.0.2:2181`. */
  connect: string;
  /** Requested session timeout. @default 10000 */
  sessionTimeoutMs?: number;
  /**
   * How long start-up waits for the first connection before falling back to the local cache.
   * @default 5000
   */
  connectTimeoutMs?: number;
  /**
   * When a starting instance takes over the worker ID of an instance that is gone (its
   * liveness node gone, its recorded horizon `reclaimMarginMs` past): `never` (refuse with
   * `LEAF_WORKER_ID_EXHAUSTED` once sequences run out), `when-exhausted` (fresh sequences
   * first), `always` (reclaim before a fresh sequence: Deployments, autoscaling). See
   * docs/operations.md, "Worker IDs".
   * @default 'when-exhausted'
   */
  reclaim?: 'never' | 'when-exhausted' | 'always';
  /**
   * How far past a gone holder's recorded horizon the clock must be before its worker ID is
   * reclaimed (covers clock differences between hosts).
   * @default 2000
   */
  reclaimMarginMs?: number;
}

/** Bit split of snowflake IDs (see `SnowflakeLayoutSpec`). */
export interface LeafSnowflakeLayoutOptions {
  timestampBits: number;
  /** @default 0 */
  dataCenterBits?: number;
  workerBits: number;
  sequenceBits: number;
}

/** Options of snowflake mode (`database`: see {@link LeafSnowflakeCoordinationOptions}). */
export interface LeafSnowflakeOptions extends LeafSnowflakeCoordinationOptions {
  /** @default true */
  enabled?: boolean;
  /**
   * Start of the millisecond field (Twitter's epoch, as in Leaf).
   * @default 1288834974657 (1735689600000 with the `js-safe` layout)
   */
  epoch?: number;
  /**
   * Worker ID (0-1023) of embedded mode (no ZooKeeper). There is no default: snowflake
   * mode needs a worker-ID source, this or `zookeeper`, so that two instances never share
   * worker 0 by accident. Give every instance its own.
   */
  workerId?: number;
  /** ZooKeeper: the worker ID is assigned through it. Exclusive with `workerId` and `ordinal`. */
  zookeeper?: LeafZookeeperOptions;
  /**
   * StatefulSet: the worker ID is the ordinal at the end of the host name (`leaf-3` → 3)
   * plus `offset`, guarded by the state volume's lock and time lease (give each pod its own
   * volume). `true` reads `os.hostname()`. Exclusive with `workerId` and `zookeeper`.
   */
  ordinal?: true | { hostname?: string; offset?: number };
  /**
   * Bit layout: `'leaf'` (41 bits ms, 10 bits worker, 12 bits sequence), `'js-safe'` (IDs
   * ≤ 2^53 - 1: 40 bits ms, 7 bits worker, 6 bits sequence; default epoch 2025-01-01), or an
   * explicit split. See docs/operations.md, "Snowflake layouts".
   * @default 'leaf'
   */
  layout?: 'leaf' | 'js-safe' | LeafSnowflakeLayoutOptions;
  /** Data-centre ID in every ID, when the layout has `dataCenterBits` (one ZooKeeper per data centre). @default 0 */
  dataCenterId?: number;
  /**
   * Identity `ip:port` registered in ZooKeeper (required with `zookeeper`), or recorded in
   * the database lease row (with `database`; default: the host name).
   */
  advertise?: string;
  /** Directory of the local state file (worker ID and time lease). @default './data' */
  stateDir?: string;
  /**
   * Each new millisecond's sequence starts at a random value in `[0, bound)`; 0 starts at 0.
   * @default 100
   */
  sequenceRandomBound?: number;
  /** A clock that went back by at most this many ms is waited out (twice the offset). @default 5 */
  clockBackwardsToleranceMs?: number;
  /** Period of the heartbeat that writes the time and extends the time lease. @default 3000 */
  heartbeatIntervalMs?: number;
  /** How far beyond "now" each extension of the time lease reaches. @default 10000 */
  leaseMs?: number;
  /**
   * While ZooKeeper is unreachable the lease is extended in the local file only, for at
   * most this long after the last successful ZooKeeper write; then the generator fails closed.
   * Every ZooKeeper write records the resulting horizon, and an instance taking over the
   * worker ID on another host (or without this host's state file) waits past it: this is
   * how long a ZooKeeper outage is ridden out, and also how long such a takeover may wait
   * after a crash (docs/design.md, "Snowflake safety").
   * @default 60000
   */
  localRunwayMs?: number;
  /**
   * At start, how long to wait for the clock to pass the persisted lease (or a
   * predecessor's horizon) before refusing. The default covers the default
   * `localRunwayMs` + `leaseMs`, so a takeover after a crash waits rather than refuses.
   * @default 90000
   */
  startupMaxWaitMs?: number;
}

/** One database ranges come from: the caller's store, or a TypeORM DataSource the library wraps. */
export type OneAllocation =
  | { readonly kind: 'store'; readonly store: LeafAllocStore }
  | { readonly kind: 'dataSource'; readonly dataSource: DataSource };

/** Segment options after defaults and validation. */
export interface ResolvedSegmentOptions {
  /** Where ranges come from: the caller's store, or a TypeORM DataSource the library wraps. */
  readonly allocation:
    | OneAllocation
    | {
        readonly kind: 'several';
        readonly sources: ReadonlyArray<
          | { readonly name: string; readonly dataSource: DataSource }
          | { readonly name: string; readonly store: LeafAllocStore }
        >;
        readonly timeoutMs: number;
      };
  readonly maxStep: number;
  readonly maxRangeCount: number;
  readonly stepDurationMs: number;
  readonly refreshIntervalMs: number;
  readonly loadTimeoutMs: number;
  readonly preloadThreshold: number;
  readonly maxConcurrentLoads: number;
  readonly warmTags: readonly string[];
  readonly readinessRunwayMs: number;
  readonly handBackOnClose: boolean;
  /** With several databases: how long one may take to answer before the next is asked. */
  readonly databaseTimeoutMs: number;
  /** Where the high-water mark lives; `null` when off. */
  readonly highWater: ResolvedHighWaterOptions | null;
}

/** Snowflake options after defaults and validation (a discriminated union on `workerSource.kind`). */
export type ResolvedSnowflakeOptions = SnowflakeSettings & {
  readonly workerSource: WorkerSourceSettings;
  /** The region lease on the data-centre ID; `null`: assigned by hand. */
  readonly region: ResolvedRegionOptions | null;
};

/** `snowflake.region` after defaults and validation: the settings and where the registry is. */
export type ResolvedRegionOptions = RegionLeaseSettings & {
  /** Period of the background renewal (the heartbeat job's). */
  readonly renewIntervalMs: number;
  readonly registry:
    | { readonly kind: 'dataSource'; readonly dataSource: DataSource }
    | { readonly kind: 'store'; readonly store: RegionRegistry };
};

/** The ID journal, on: who this instance is in it. */
export interface ResolvedJournalOptions {
  readonly instance: string;
}

/** {@link LeafModuleOptions} after defaults and validation; what services inject. */
export interface ResolvedLeafOptions {
  readonly name: string;
  readonly maxBatchSize: number;
  /** The ID journal's settings; `null` when `journal` is off. */
  readonly journal: ResolvedJournalOptions | null;
  readonly clock: Clock;
  /** `null` when segment mode is disabled. */
  readonly segment: ResolvedSegmentOptions | null;
  /** `null` when snowflake mode is disabled. */
  readonly snowflake: ResolvedSnowflakeOptions | null;
  /** `null` when sequence mode is disabled. */
  readonly sequence: ResolvedSequenceOptions | null;
  /** The key ring of opaque IDs; `null` without keys. */
  readonly opaque: OpaqueIds | null;
}
