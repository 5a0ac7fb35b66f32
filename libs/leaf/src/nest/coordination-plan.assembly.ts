import type { LeafOptionPath } from '../core/leaf-option-rules';

/**
 * How a configuration front end (the application's environment) picks one coordination
 * backend for the whole instance — snowflake's worker IDs and sequence mode's election — and
 * which of its options then apply (docs/configuration.md, `LEAF_COORDINATION`). With
 * ./coordination.assembly.ts the only place that asks which backend is chosen.
 */

/** The coordination backends a front end chooses between. */
export const COORDINATIONS = ['zookeeper', 'database'] as const;
/** One of {@link COORDINATIONS}. */
export type Coordination = (typeof COORDINATIONS)[number];

/** What the front end knows, in the library's terms. */
export interface CoordinationInput {
  /** The backend the operator chose, or `undefined` for the default. */
  readonly chosen: Coordination | undefined;
  /** The instance's ZooKeeper (worker IDs, the election), or `undefined`. */
  readonly zookeeper: string | undefined;
  /** The election's own ZooKeeper (with sequence mode on only), or `undefined`. */
  readonly sequenceZookeeper: string | undefined;
  /** Sequence mode is on: it needs an election. */
  readonly sequence: boolean;
  /** The database the instance opens: none, an embedded one (SQLite), one server, several. */
  readonly database: 'none' | 'embedded' | 'server' | 'several';
  /** A worker ID given (`explicit`), one from the host name's ordinal (`hostname`), or none. */
  readonly workerId: 'explicit' | 'hostname' | null;
  /** The options set so far, by path. */
  readonly options: { readonly [P in LeafOptionPath]?: unknown };
}

/** Why the choice cannot work as configured; the front end words it in its own terms. */
export type CoordinationProblem =
  | 'zookeeper-missing'
  | 'database-none'
  | 'database-several'
  | 'database-embedded'
  | 'election-missing'
  | 'election-zookeeper-missing'
  | 'worker-id-with-zookeeper'
  | 'lease-with-zookeeper'
  | 'session-with-database';

/** The front end's choice worked out: backend, worker-ID source, options, problems. */
export interface CoordinationPlan {
  /** `null`: none (the explicit and embedded worker IDs apply; no election). */
  readonly coordination: Coordination | null;
  /** Where snowflake's worker ID comes from; `embedded-default`: worker 0, one process. */
  readonly workerSource: 'zookeeper' | 'database' | 'hostname' | 'explicit' | 'embedded-default';
  /** Snowflake registers its address where it coordinates: it needs `snowflake.advertise`. */
  readonly advertisesWorker: boolean;
  /** `input.options` with the chosen backend's settings added and the other's left out. */
  readonly options: { [P in LeafOptionPath]?: unknown };
  readonly problems: readonly CoordinationProblem[];
}

/**
 * The coordination of `input`: the chosen backend; else ZooKeeper when one is configured; else
 * the database when it is one server (MySQL/MariaDB or PostgreSQL); else none. The one place
 * this default is written (docs/configuration.md, docs/snowflake.md).
 */
export function coordinationPlan(input: CoordinationInput): CoordinationPlan {
  const problems: CoordinationProblem[] = [];
  const anyZookeeper = input.zookeeper ?? input.sequenceZookeeper;
  const coordination =
    input.chosen ??
    (anyZookeeper !== undefined ? 'zookeeper' : input.database === 'server' ? 'database' : null);
  if (coordination === 'zookeeper' && anyZookeeper === undefined)
    problems.push('zookeeper-missing');
  if (coordination === 'database' && input.database !== 'server')
    problems.push(`database-${input.database}` as CoordinationProblem);
  const explicit = input.workerId === 'explicit';
  const workerSource =
    input.workerId === 'hostname'
      ? 'hostname'
      : explicit && coordination !== 'zookeeper'
        ? 'explicit'
        : coordination === 'database'
          ? 'database'
          : input.zookeeper !== undefined
            ? 'zookeeper'
            : explicit
              ? 'explicit'
              : 'embedded-default';
  if (explicit && input.zookeeper !== undefined && coordination === 'zookeeper')
    problems.push('worker-id-with-zookeeper');
  const options = { ...input.options };
  // A ZooKeeper set for the election or the marks does not assign worker IDs; it guards an
  // ordinal from the host name.
  if (workerSource !== 'zookeeper' && workerSource !== 'hostname')
    delete options['snowflake.zookeeper.connect'];
  if (workerSource !== 'database') delete options['snowflake.database.marginMs'];
  if (input.sequence) electionOptions(coordination, input, options, problems);
  return {
    coordination,
    workerSource,
    advertisesWorker: workerSource === 'zookeeper' || workerSource === 'database',
    options,
    problems,
  };
}

/** Sequence mode's election on `coordination`: its options set, the other backend's refused. */
function electionOptions(
  coordination: Coordination | null,
  input: CoordinationInput,
  options: CoordinationPlan['options'],
  problems: CoordinationProblem[],
): void {
  if (coordination === null) {
    problems.push('election-missing');
  } else if (coordination === 'zookeeper') {
    const connect = input.sequenceZookeeper ?? input.zookeeper;
    if (connect === undefined) problems.push('election-zookeeper-missing');
    else options['sequence.zookeeper.connect'] = connect;
    if ('sequence.database.leaseMs' in input.options) problems.push('lease-with-zookeeper');
    delete options['sequence.database.leaseMs'];
  } else {
    if ('sequence.zookeeper.sessionTimeoutMs' in input.options)
      problems.push('session-with-database');
    delete options['sequence.zookeeper.sessionTimeoutMs'];
    options['sequence.coordination'] = 'database';
  }
}
