/**
 * Segment mode when the database misbehaves under load (docs/reliability.md):
 * - the database stopped for ~20 s, then started: buffers serve, a tag with nothing in
 *   memory gets typed 503s, everything recovers without a restart;
 * - COMMIT acknowledgements lost between the application and the database: the possibly
 *   committed range is abandoned, never served;
 * - the row lock held by another session past the lock-wait timeout: a typed 503, then
 *   recovery.
 */
import { sleep } from '../../support/id-load';
import type { TestDatabase } from '../../support/test-database';
import { CommitAckProxy } from '../harness/commit-ack-proxy';
import type { MariaDbServer } from '../harness/mariadb-server';
import type { Operation } from '../harness/history';
import { segmentRoute } from '../harness/load';
import {
  runSegmentScenario,
  type FaultContext,
  type ScenarioSize,
  type SegmentScenarioResult,
} from './scenario';

/** The codes a segment request may fail with while its database is unavailable. */
export const DATABASE_DOWN_CODES = [
  'LEAF_SEGMENT_NOT_READY',
  'LEAF_ALLOCATION_FAILED',
  'LEAF_ALLOCATION_LOCK_TIMEOUT',
];

/** Operations that failed other than with a 503 and one of {@link DATABASE_DOWN_CODES}. */
function untypedFailures(result: SegmentScenarioResult): Operation[] {
  return result.history.filter(
    (o) => o.type !== 'ok' && !(o.status === 503 && DATABASE_DOWN_CODES.includes(o.error ?? '')),
  );
}

const hotRoutes = (tag: string) => [segmentRoute('get', tag), segmentRoute('ids', tag, 50)];

/** Creates `tag` (autocommit) and, unless `later`, makes every load ask for it from now on. */
async function addColdTag(
  db: TestDatabase,
  context: FaultContext,
  tag: string,
  later = false,
): Promise<void> {
  await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 1000)', [tag]);
  if (!later) askFor(context, tag);
}

/** Every load asks for `tag` from now on. */
function askFor(context: FaultContext, tag: string): void {
  for (const load of context.loads) load.addRoute(segmentRoute('get', tag));
}

/** Waits (at most `timeoutMs`) until every instance served `tag` after `since`; the time it took. */
async function untilServed(
  context: FaultContext,
  tag: string,
  since: number,
  timeoutMs: number,
): Promise<number | null> {
  const deadline = Date.now() + timeoutMs;
  const served = (name: string) =>
    context.history.operations.some(
      (o: Operation) =>
        o.process === name && o.key === tag && o.type === 'ok' && o.invokeMs >= since,
    );
  while (Date.now() < deadline) {
    if (context.cluster.instances.every((i) => served(i.name))) return Date.now() - since;
    await sleep(100);
  }
  return null;
}

/** Result of {@link segmentDatabaseStopped}. */
export interface DatabaseStoppedResult extends SegmentScenarioResult {
  readonly stoppedAt: number;
  readonly restartedAt: number;
  /** From the restart until every instance served the cold tag (`null`: never). */
  readonly recoveryMs: number | null;
}

/**
 * Stops `server` (clean shutdown) for `outageMs` under load, then starts it again. A
 * second tag, never loaded before the outage, is asked for during it.
 */
export async function segmentDatabaseStopped(
  server: MariaDbServer,
  size: ScenarioSize,
  outageMs = 20_000,
): Promise<DatabaseStoppedResult> {
  const hot = 'sys-outage';
  const cold = 'sys-outage-cold';
  let stoppedAt = 0;
  let restartedAt = 0;
  let recoveryMs: number | null = null;
  const result = await runSegmentScenario({
    name: `segment database stopped ${outageMs / 1000} s`,
    size,
    db: server.database,
    tags: [hot],
    routes: () => hotRoutes(hot),
    pauseMs: 2,
    fault: async (context) => {
      await addColdTag(server.database, context, cold, true);
      stoppedAt = Date.now();
      await server.stop();
      // Asked for only now: nothing of it is in memory.
      askFor(context, cold);
      await sleep(outageMs);
      await server.start();
      restartedAt = Date.now();
      recoveryMs = await untilServed(context, cold, restartedAt, 60_000);
      return { outageMs: restartedAt - stoppedAt, recoveryMs };
    },
  });
  return { ...result, stoppedAt, restartedAt, recoveryMs };
}

/** The expectations of {@link segmentDatabaseStopped}. */
export function expectDatabaseStoppedHandled(result: DatabaseStoppedResult): void {
  const during = (o: Operation) =>
    o.invokeMs >= result.stoppedAt && o.completeMs <= result.restartedAt;
  // Served from the buffers while the database was down...
  expect(result.history.filter((o) => during(o) && o.type === 'ok').length).toBeGreaterThan(0);
  // ...and the tag with nothing in memory got typed 503s, nothing else.
  const failed = result.history.filter((o) => during(o) && o.type !== 'ok');
  expect(failed.length).toBeGreaterThan(0);
  for (const operation of failed) {
    expect({ status: operation.status, error: operation.error }).toEqual({
      status: 503,
      error: expect.stringMatching(new RegExp(`^(${DATABASE_DOWN_CODES.join('|')})$`)),
    });
  }
  // Recovered without a restart.
  expect(result.recoveryMs).not.toBeNull();
  expect(result.history.filter((o) => o.type !== 'ok' && o.error === 'NOT_LISTENING')).toEqual([]);
}

/** `LEAF_DB_URL` of `db` through a proxy on `port`. */
function throughPort(db: TestDatabase, port: number): string {
  const url = new URL(db.url);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

/** Result of {@link segmentLostCommitAck}. */
export interface LostCommitResult extends SegmentScenarioResult {
  /** The ranges whose COMMIT answer was lost (they committed: the audit has them). */
  readonly lostRanges: Array<{ tag: string; start: bigint; end: bigint }>;
  /** IDs served from inside those ranges (must be none). */
  readonly servedFromLost: number;
  readonly drops: number;
}

/**
 * The instances reach the database through a {@link CommitAckProxy}; `drops` times, the
 * next COMMIT's answer is lost (a new tag is asked for each time, so an allocation follows).
 */
export async function segmentLostCommitAck(
  db: TestDatabase,
  size: ScenarioSize,
): Promise<LostCommitResult> {
  const drops = size === 'ci' ? 3 : 10;
  const { hostname, port } = new URL(db.url);
  const proxy = new CommitAckProxy({ host: hostname, port: Number(port) || 3306 });
  await proxy.start();
  try {
    const result = await runSegmentScenario({
      name: 'segment lost COMMIT acknowledgement',
      size,
      db,
      dbUrl: throughPort(db, proxy.port),
      tags: ['sys-ack'],
      routes: () => hotRoutes('sys-ack'),
      pauseMs: 2,
      fault: async (context) => {
        for (let i = 0; i < drops; i++) {
          proxy.loseNextCommitAcks(1);
          await addColdTag(db, context, `sys-ack-${i}`);
          const deadline = Date.now() + 30_000;
          while (proxy.lost.length <= i && Date.now() < deadline) await sleep(50);
          await sleep(300);
        }
        return { lost: proxy.lost.length };
      },
    });
    // A lost COMMIT's range is the last one its (now dead) session committed.
    const lostRanges = proxy.lost.flatMap(({ connectionId }) => {
      const ofSession = result.audit.ranges.filter((r) => r.connectionId === connectionId);
      const last = ofSession[ofSession.length - 1];
      return last ? [{ tag: last.tag, start: last.start, end: last.end }] : [];
    });
    let servedFromLost = 0;
    for (const operation of result.history.operations) {
      if (operation.type !== 'ok') continue;
      for (const id of operation.ids) {
        if (lostRanges.some((r) => r.tag === operation.key && id >= r.start && id < r.end)) {
          servedFromLost++;
        }
      }
    }
    console.log(
      `[system] lost COMMIT acks: ${proxy.lost.length}, lost ranges ${JSON.stringify(
        lostRanges.map((r) => `${r.tag} [${r.start}, ${r.end})`),
      )}, IDs served from them ${servedFromLost}`,
    );
    return { ...result, lostRanges, servedFromLost, drops: proxy.lost.length };
  } finally {
    await proxy.stop();
  }
}

/** The expectations of {@link segmentLostCommitAck}. */
export function expectLostCommitHandled(result: LostCommitResult, drops: number): void {
  expect(result.drops).toBe(drops);
  // Every lost answer hid a real commit...
  expect(result.lostRanges).toHaveLength(drops);
  // ...whose range was never served.
  expect(result.servedFromLost).toBe(0);
  // Failures were typed answers, never a 500 or a dropped connection to the client.
  expect(untypedFailures(result)).toEqual([]);
}

/** Result of {@link segmentRowLockHeld}. */
export interface RowLockResult extends SegmentScenarioResult {
  readonly heldMs: number;
  /** Answers `LEAF_ALLOCATION_LOCK_TIMEOUT` to requests for the locked tag. */
  readonly lockTimeouts: number;
  /** From the release until every instance served the locked tag (`null`: never). */
  readonly recoveryMs: number | null;
  readonly lockedTag: string;
  readonly hotTag: string;
}

/**
 * Another session creates a tag and holds its row lock (`SELECT ... FOR UPDATE`, then an
 * update of its own) for `holdMs`, past the application's 5 s lock wait, while the load
 * asks for it; then commits.
 */
export async function segmentRowLockHeld(
  db: TestDatabase,
  size: ScenarioSize,
  holdMs = 12_000,
): Promise<RowLockResult> {
  const hotTag = 'sys-lock-hot';
  const lockedTag = 'sys-lock';
  let heldMs = 0;
  let recoveryMs: number | null = null;
  const result = await runSegmentScenario({
    name: `segment row lock held ${holdMs / 1000} s`,
    size,
    db,
    tags: [hotTag],
    routes: () => hotRoutes(hotTag),
    pauseMs: 2,
    fault: async (context) => {
      await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 1000)', [
        lockedTag,
      ]);
      const holder = await db.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT max_id FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE', [
          lockedTag,
        ]);
        await holder.query('UPDATE leaf_alloc SET max_id = max_id + 1000 WHERE biz_tag = ?', [
          lockedTag,
        ]);
        const lockedAt = Date.now();
        askFor(context, lockedTag);
        await sleep(holdMs);
        await holder.query('COMMIT');
        heldMs = Date.now() - lockedAt;
      } finally {
        await holder.end();
      }
      const releasedAt = Date.now();
      recoveryMs = await untilServed(context, lockedTag, releasedAt, 30_000);
      return { heldMs, recoveryMs };
    },
  });
  const lockTimeouts = result.history.filter(
    (o) => o.key === lockedTag && o.error === 'LEAF_ALLOCATION_LOCK_TIMEOUT',
  ).length;
  return { ...result, heldMs, lockTimeouts, recoveryMs, lockedTag, hotTag };
}

/** The expectations of {@link segmentRowLockHeld}. */
export function expectRowLockHandled(result: RowLockResult): void {
  expect(result.lockTimeouts).toBeGreaterThan(0);
  expect(result.recoveryMs).not.toBeNull();
  // The other tag never noticed; the locked one only got typed 503s.
  expect(result.history.filter((o) => o.key === result.hotTag && o.type !== 'ok')).toEqual([]);
  expect(untypedFailures(result)).toEqual([]);
}
