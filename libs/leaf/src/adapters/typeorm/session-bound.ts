import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';

/**
 * How long a session that holds a `leaf_alloc` row lock may stay silent, and how long one
 * waiting for the lock waits (docs/design.md, "How segment mode works"; docs/operations.md,
 * "A dead lock holder").
 *
 * An instance that dies (or stops: a frozen VM, a host gone from the network) inside an
 * allocation transaction keeps the row locked until the server drops its connection. Left
 * to the server's defaults that is `wait_timeout` (8 h) or TCP keepalive; every instance's
 * allocation of that tag fails meanwhile. Each row-locking transaction on MySQL/MariaDB
 * (`mysql.dialect.ts`) therefore bounds its own session first and restores it afterwards
 * (the connection belongs to the application's pool):
 *
 * - `idle-transaction` (MariaDB 10.3 and later): `idle_transaction_timeout` and its write and
 *   read-only variants (which take precedence when set, so all three are set). They count only
 *   inside a transaction: the server closes the connection of a transaction idle that long,
 *   which rolls it back and releases the lock;
 * - `wait-timeout` (MySQL, which has no idle-transaction timeout; any server without the
 *   variable): `wait_timeout`, the idle time after which the server closes any connection,
 *   set just before `START TRANSACTION` and restored after `COMMIT`/`ROLLBACK`.
 *
 * Both take effect at the session's next wait for a statement, so the transaction that
 * follows is covered; both need no privilege (session scope).
 */
export type SessionBound = 'idle-transaction' | 'wait-timeout';

/**
 * Detects the {@link SessionBound} of a server from its answer: a row means the server has
 * `idle_transaction_timeout`. One round trip, once per store.
 */
export const DETECT_SESSION_BOUND_SQL = "SHOW SESSION VARIABLES LIKE 'idle_transaction_timeout'";

/** The {@link SessionBound} of a server, from its answer to {@link DETECT_SESSION_BOUND_SQL}. */
export function sessionBoundOf(rows: unknown): SessionBound {
  return Array.isArray(rows) && rows.length > 0 ? 'idle-transaction' : 'wait-timeout';
}

/** The limits a row-locking transaction's session runs with, in seconds. */
export interface SessionLimits {
  /** Longest silence of the session inside the transaction before the server drops it. */
  readonly idleTimeoutSec: number;
  /** `innodb_lock_wait_timeout`: how long the transaction waits for the row lock. */
  readonly lockWaitTimeoutSec: number;
}

/** Each variable set for one transaction, with the user variable its own value is kept in. */
function variables(bound: SessionBound, limits: SessionLimits): Array<[string, string, number]> {
  const lock: [string, string, number] = [
    'innodb_lock_wait_timeout',
    '@leaf_lock_wait',
    limits.lockWaitTimeoutSec,
  ];
  if (bound === 'wait-timeout')
    return [lock, ['wait_timeout', '@leaf_wait', limits.idleTimeoutSec]];
  return [
    lock,
    ['idle_transaction_timeout', '@leaf_idle', limits.idleTimeoutSec],
    ['idle_write_transaction_timeout', '@leaf_idle_write', limits.idleTimeoutSec],
    ['idle_readonly_transaction_timeout', '@leaf_idle_read', limits.idleTimeoutSec],
  ];
}

/**
 * The two statements around one row-locking transaction: `set` (before `START TRANSACTION`)
 * keeps the session's own values in user variables and sets the limits; `restore` (after
 * `COMMIT` or `ROLLBACK`) puts them back. One round trip each. The limits are checked
 * integers ({@link checkSessionLimits}), written as literals.
 */
export function sessionBoundSql(
  bound: SessionBound,
  limits: SessionLimits,
): { set: string; restore: string } {
  const vars = variables(bound, limits);
  const keep = vars.map(([name, saved]) => `${saved} = @@SESSION.${name}`);
  const set = vars.map(([name, , value]) => `SESSION ${name} = ${value}`);
  const restore = vars.map(([name, saved]) => `SESSION ${name} = ${saved}`);
  return { set: `SET ${[...keep, ...set].join(', ')}`, restore: `SET ${restore.join(', ')}` };
}

/** The largest limits MySQL/MariaDB take (`wait_timeout`, `idle_transaction_timeout`: a year). */
const MYSQL_MAX_LIMITS: SessionLimits = {
  idleTimeoutSec: 31_536_000,
  lockWaitTimeoutSec: 1_073_741_824,
};

/**
 * @throws {LeafConfigurationError} when a limit is not an integer in 1..its `max` (the
 *   server's), one problem each, in `max`'s order.
 */
export function checkSessionLimits(
  limits: SessionLimits,
  owner = 'MysqlLeafAllocStore',
  max = MYSQL_MAX_LIMITS,
): SessionLimits {
  const problems = (Object.keys(max) as Array<keyof SessionLimits>)
    .filter(
      (name) => !Number.isInteger(limits[name]) || limits[name] < 1 || limits[name] > max[name],
    )
    .map((name) => `${owner} ${name} must be an integer in 1..${max[name]} (got ${limits[name]})`);
  if (problems.length > 0) throw new LeafConfigurationError(problems);
  return limits;
}

/** Silence allowed to an allocation session beyond its own high-water calls, in seconds. */
export const ALLOCATION_IDLE_SLACK_SEC = 10;

/**
 * The `idleTimeoutSec` of an allocation session: {@link ALLOCATION_IDLE_SLACK_SEC} (an
 * event loop held up by a long task or a garbage collection, a retransmitted packet), plus,
 * with the high-water mark, three of its calls (`callTimeoutMs` each): the longest pause
 * inside the transaction is the first mark of a tag, written before `COMMIT` as create,
 * read, set. The default mark (2 s) gives 16 s; no mark, 10 s.
 */
export function allocationIdleTimeoutSec(highWaterCallTimeoutMs: number | null): number {
  if (highWaterCallTimeoutMs === null) return ALLOCATION_IDLE_SLACK_SEC;
  return ALLOCATION_IDLE_SLACK_SEC + Math.ceil((3 * highWaterCallTimeoutMs) / 1000);
}
