/**
 * What every system scenario shares: its size (the CI subset and the full matrix run the
 * same function with a different size) and the one-line report the docs' figures come
 * from (docs/reliability.md).
 */
import {
  availability,
  checkSegment,
  checkUnique,
  type AvailabilitySummary,
  type SegmentResult,
  type UniqueResult,
} from '../harness/checker';
import { History } from '../harness/history';
import {
  installAllocationAudit,
  readAllocationAudit,
  type AllocationAudit,
} from '../harness/allocation-audit';
import { Cluster } from '../harness/cluster';
import { Load, type LoadRoute } from '../harness/load';
import { sleep } from '../../support/id-load';
import { describeWhen, describeWithServices, type TestService } from '../../support/services';
import { MariaDbServer, mariaDbInstalled } from '../harness/mariadb-server';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';

/** A migrated database of its own on the shared server, with the allocation audit installed. */
export async function auditedTestDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase({ migrate: true });
  await installAllocationAudit(db);
  return db;
}

/** `ci`: the short version in `npm test`; `full`: `npm run test:system`. */
export type ScenarioSize = 'ci' | 'full';

/** The knobs a size sets. */
export interface SizeSettings {
  /** Application instances. */
  readonly instances: number;
  /** Length of the load around the fault. */
  readonly loadMs: number;
  /** Client loops. */
  readonly concurrency: number;
}

export const SIZES: Record<ScenarioSize, SizeSettings> = {
  ci: { instances: 2, loadMs: 8_000, concurrency: 8 },
  full: { instances: 3, loadMs: 30_000, concurrency: 32 },
};

/** The figures of one run, as printed and as docs/reliability.md quotes them. */
export interface ScenarioReport {
  readonly scenario: string;
  readonly size: ScenarioSize;
  readonly durationMs: number;
  readonly unique: UniqueResult;
  readonly availability: AvailabilitySummary;
  /** Scenario-specific facts (e.g. the 503 codes seen, the refused ranges). */
  readonly facts: Record<string, unknown>;
}

/** Checks uniqueness and summarises availability of `history`, and prints one report line. */
export function report(
  scenario: string,
  size: ScenarioSize,
  startedAt: number,
  history: History,
  facts: Record<string, unknown> = {},
): ScenarioReport {
  const result: ScenarioReport = {
    scenario,
    size,
    durationMs: Date.now() - startedAt,
    unique: checkUnique(history),
    availability: availability(history),
    facts,
  };
  const { unique, availability: a } = result;
  console.log(
    `[system] ${scenario} (${size}): ${unique.ids} IDs checked, ${unique.duplicateCount} duplicates, ` +
      `${a.ok} ok / ${a.fail} fail / ${a.info} info, longest gap ${a.longestGapMs} ms, ` +
      `run ${result.durationMs} ms; errors ${JSON.stringify(a.errors)}; ${JSON.stringify(facts, bigintJson)}`,
  );
  return result;
}

/** JSON replacer: bigint as a decimal string. */
export function bigintJson(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** What a fault sees while the load runs. */
export interface FaultContext {
  readonly cluster: Cluster;
  /** One load per instance, in the cluster's order. */
  readonly loads: readonly Load[];
  readonly history: History;
  readonly settings: SizeSettings;
}

/** Settings of {@link runSegmentScenario}. */
export interface SegmentScenario {
  /** Printed and returned as the report's name. */
  readonly name: string;
  readonly size: ScenarioSize;
  /** The audited database (its `leaf_alloc` gets the tags). */
  readonly db: TestDatabase;
  /** `LEAF_DB_URL` of the instances when not `db.url` (a proxy, a private server). */
  readonly dbUrl?: string;
  /** The tags to create (row step `step`). */
  readonly tags: readonly string[];
  /** Application instances. @default the size's `instances` */
  readonly instances?: number;
  /**
   * The committed ranges, read after the instances stopped, when `db`'s audit alone is not
   * the whole record (a failover: the old primary committed ranges the replica never got).
   * @default readAllocationAudit(db)
   */
  readonly readAudit?: () => Promise<AllocationAudit>;
  /** @default 1000 */
  readonly step?: number;
  /** `max_id` of each new tag row. @default 1 */
  readonly initialMaxId?: bigint;
  /** More environment of instance `name` (merged over the scenario's). */
  readonly env?: (name: string) => Record<string, string>;
  /** The routes instance `name` is loaded with. */
  readonly routes: (name: string) => LoadRoute[];
  /** Tags instance `name` warms at start. @default every tag */
  readonly warmTags?: (name: string) => string[];
  /** Node arguments of the instances (another build). */
  readonly args?: readonly string[];
  /** Pause of each client loop after a successful request. @default 0 */
  readonly pauseMs?: number;
  /** Load before the fault. @default a third of the size's `loadMs` */
  readonly warmupMs?: number;
  /** The fault, run after the warm-up; returns facts for the report. */
  readonly fault: (context: FaultContext) => Promise<Record<string, unknown>>;
}

/** Result of {@link runSegmentScenario}. */
export interface SegmentScenarioResult extends ScenarioReport {
  readonly segment: SegmentResult;
  readonly audit: AllocationAudit;
  readonly history: History;
  /** Every instance's output, by name (for logged alerts). */
  readonly output: Record<string, string>;
}

/**
 * The frame of a segment fault: instances start, each loaded by its own clients; after the
 * warm-up the fault runs; the load goes on for another third; instances stop
 * gracefully (hand-back); the history is checked against the audit.
 */
export async function runSegmentScenario(
  scenario: SegmentScenario,
): Promise<SegmentScenarioResult> {
  const settings = {
    ...SIZES[scenario.size],
    instances: scenario.instances ?? SIZES[scenario.size].instances,
  };
  const { db } = scenario;
  for (const tag of scenario.tags) {
    await db.query(
      `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, ${(scenario.initialMaxId ?? 1n).toString()}, ?)`,
      [tag, scenario.step ?? 1000],
    );
  }
  const startedAt = Date.now();
  const cluster = await Cluster.start({
    size: settings.instances,
    env: (name) => ({
      LEAF_DB_URL: scenario.dbUrl ?? db.url,
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_SEGMENT_WARM_TAGS: (scenario.warmTags?.(name) ?? scenario.tags).join(','),
      ...scenario.env?.(name),
    }),
    args: scenario.args,
  });
  const history = new History();
  try {
    const loads = cluster.instances.map((instance) =>
      Load.start({
        targets: [instance],
        routes: scenario.routes(instance.name),
        history,
        concurrency: Math.max(2, Math.ceil(settings.concurrency / settings.instances)),
        durationMs: 600_000,
        pauseMs: scenario.pauseMs ?? 0,
      }),
    );
    await sleep(scenario.warmupMs ?? settings.loadMs / 3);
    const facts = await scenario.fault({ cluster, loads, history, settings });
    await sleep(settings.loadMs / 3);
    await Promise.all(loads.map((load) => load.stop()));
    await Promise.all(cluster.instances.map((instance) => instance.stop()));
    const audit = await (scenario.readAudit ?? (() => readAllocationAudit(db)))();
    const segment = checkSegment(history, audit.ranges);
    const base = report(scenario.name, scenario.size, startedAt, history, {
      ...facts,
      ranges: audit.ranges.length,
      handBacks: audit.handBacks,
      lowerings: audit.lowerings.length,
      outsideRanges: segment.outside.count,
      overlappingRanges: segment.overlapCount,
      notIncreasing: segment.notIncreasing.count,
    });
    const output = Object.fromEntries(cluster.instances.map((i) => [i.name, i.output]));
    return { ...base, segment, audit, history, output };
  } finally {
    await cluster.dispose();
  }
}

/** Safety of a segment run: no duplicate, every ID in a committed range, increasing per instance. */
export function expectSegmentSafe(
  result: SegmentScenarioResult,
  options: { overlapsExpected?: boolean } = {},
): void {
  expect(result.unique.duplicates).toEqual([]);
  expect(result.unique.valid).toBe(true);
  expect(result.segment.outside.sample).toEqual([]);
  expect(result.segment.notIncreasing.sample).toEqual([]);
  if (!options.overlapsExpected) expect(result.segment.overlaps).toEqual([]);
  expect(result.unique.ids).toBeGreaterThan(1000);
}

/**
 * A spec block of system scenarios: each case runs on an audited database of its own
 * (created before, dropped after), inside {@link describeWithServices} (a missing service
 * fails in CI).
 */
export function describeScenarios(
  services: readonly TestService[],
  title: string,
  cases: Record<string, (db: TestDatabase) => Promise<void>>,
): void {
  describeWithServices(services, title, () => {
    let db: TestDatabase | undefined;

    beforeEach(async () => {
      db = await auditedTestDatabase();
    });

    afterEach(async () => {
      await db?.drop();
    });

    for (const [name, run] of Object.entries(cases)) it(name, () => run(db!));
  });
}

const MARIADB_PACKAGE =
  'the MariaDB server package (mariadbd, mariadb-install-db): bash scripts/services.sh installs it';

/**
 * A spec block of scenarios that start private MariaDB servers of their own (e.g. a primary
 * and a replica) and need `services` besides. A missing prerequisite fails in CI, else the
 * block is skipped.
 */
export function describeOnPrivateServers(
  services: readonly TestService[],
  title: string,
  cases: Record<string, () => Promise<void>>,
): void {
  describeWithServices(services, title, () => {
    describeWhen(mariaDbInstalled(), MARIADB_PACKAGE, 'private MariaDB servers', () => {
      for (const [name, run] of Object.entries(cases)) it(name, run);
    });
  });
}

/**
 * A spec block of scenarios on a private MariaDB server (started before, disposed after;
 * one server for the block). Without the server package it fails in CI, else is skipped.
 */
export function describeOnPrivateDatabase(
  title: string,
  cases: Record<string, (server: MariaDbServer) => Promise<void>>,
): void {
  describeWhen(mariaDbInstalled(), MARIADB_PACKAGE, title, () => {
    let server: MariaDbServer | undefined;

    beforeAll(async () => {
      server = await MariaDbServer.start();
    });

    afterAll(async () => {
      await server?.dispose();
    });

    for (const [name, run] of Object.entries(cases)) it(name, () => run(server!));
  });
}
