/**
 * Sequence mode under the faults of a real cluster (docs/reliability.md, "Sequence mode"):
 * three application processes started as a deployer starts them (environment only), one
 * ZooKeeper, one database, every call recorded; then a restored `leaf_alloc`, a ZooKeeper
 * that lost its data, the issuer cut from the database or from the other instances, the
 * default forwarding address with `HOST=127.0.0.1`, an issuer that stops while it holds the
 * row lock, and four groups to spread. Each run reports calls checked, duplicates, order
 * violations and the longest time without a success on any instance.
 */
import { availability } from '../harness/checker';
import { Cluster, type ClusterInstance } from '../harness/cluster';
import { History } from '../harness/history';
import { Load, sequenceRoute } from '../harness/load';
import { sparePort, ZooKeeperServer } from '../harness/zookeeper-server';
import { sleep } from '../../support/id-load';
import { zookeeperEndpoint } from '../../support/services';
import { TcpProxy } from '../../support/tcp-proxy';
import type { Socket } from 'node:net';
import type { TestDatabase } from '../../support/test-database';
import { keyGroup } from '../../../libs/leaf/src/core/sequence/key-group';
import type { ScenarioSize } from './scenario';
import {
  allReady,
  SEQUENCE_TEST_SESSION_MS,
  sequenceReadiness,
  sequenceReport,
  type SequenceScenarioResult,
} from './sequence-order';

/** The faults of issue 25, one per case. */
export type SequenceClusterFault =
  | 'restore'
  | 'restore-unmarked'
  | 'zookeeper-wipe'
  | 'database-cut'
  | 'http-cut'
  | 'host-default'
  | 'row-lock'
  | 'spread';

const LEASE_MARGIN_MS = 1000;
/**
 * The session timeout of the ZooKeeper-wipe case: longer than the wiped server takes to answer
 * again, so that the old issuer is still inside its lease when a fresh instance is elected.
 */
export const WIPE_SESSION_MS = 15_000;

/** The session timeout of `fault`'s instances. */
export function sessionMsOf(fault: SequenceClusterFault): number {
  return fault === 'zookeeper-wipe' ? WIPE_SESSION_MS : SEQUENCE_TEST_SESSION_MS;
}
const HEARTBEAT_MS = 200;
const HAND_OVER_MS = 1000;
/** The mark's call timeout in the row-lock case (`LEAF_SEGMENT_HIGH_WATER_ZK_TIMEOUT_MS`). */
const ROW_LOCK_MARK_TIMEOUT_MS = 1000;
/**
 * How long the database lets a silent holder keep the row lock: the store's bound, 10 s plus
 * three of the mark's calls (docs/operations.md, "A tag blocked by a dead lock holder").
 */
export const ROW_LOCK_HOLD_MS = 10_000 + 3 * ROW_LOCK_MARK_TIMEOUT_MS;
/** How long the row-lock case watches after the lock was taken. */
const ROW_LOCK_WATCH_MS = ROW_LOCK_HOLD_MS + 8_000;

const SIZES: Record<ScenarioSize, { loadMs: number; concurrency: number; cutMs: number }> = {
  ci: { loadMs: 9_000, concurrency: 4, cutMs: 6_000 },
  full: { loadMs: 30_000, concurrency: 12, cutMs: 15_000 },
};

/** What a run measured beyond the common report. */
export interface SequenceClusterResult extends SequenceScenarioResult {
  /** The longest stretch without a success, per instance (from the first ready moment). */
  readonly longestGapMsByInstance: Record<string, number>;
  /** stdout and stderr of every instance, by name. */
  readonly logs: Record<string, string>;
}

/** Armed, the relay lets one row-locking statement through, then goes silent both ways. */
interface StallTrigger {
  armed: boolean;
  firedAt: number | null;
}

/**
 * A database relay that, once armed, forwards the first statement that locks a `leaf_alloc`
 * row and then nothing more in either direction: the server holds the lock for a client that
 * went silent inside its transaction, as when a host vanishes or a process is frozen there.
 */
function stallingRelay(trigger: StallTrigger) {
  return (client: Socket, upstream: Socket): void => {
    let stalled = false;
    client.on('data', (chunk: Buffer) => {
      if (stalled) return;
      upstream.write(chunk);
      if (
        trigger.armed &&
        trigger.firedAt === null &&
        /FOR UPDATE|UPDATE\s+`?leaf_alloc/i.test(chunk.toString('latin1'))
      ) {
        trigger.firedAt = Date.now();
        stalled = true;
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!stalled) client.write(chunk);
    });
  };
}

/** Per-instance proxies: ZooKeeper always, the database and the HTTP address when asked. */
class Proxies {
  readonly zk: TcpProxy[] = [];
  readonly db: TcpProxy[] = [];
  readonly http: TcpProxy[] = [];
  readonly stalls: StallTrigger[] = [];

  async start(
    count: number,
    zk: { host: string; port: number },
    db: { host: string; port: number } | null,
    httpPorts: number[] | null,
  ): Promise<void> {
    for (let i = 0; i < count; i++) {
      this.zk.push(new TcpProxy(zk));
      const stall: StallTrigger = { armed: false, firedAt: null };
      this.stalls.push(stall);
      if (db) this.db.push(new TcpProxy(db, stallingRelay(stall)));
      if (httpPorts) this.http.push(new TcpProxy({ host: '127.0.0.1', port: httpPorts[i]! }));
    }
    await Promise.all([...this.zk, ...this.db, ...this.http].map((proxy) => proxy.start()));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.zk, ...this.db, ...this.http].map((proxy) => proxy.stop()));
  }
}

/** Keys that cover every one of `groups` groups, two per group. */
function keysCovering(groups: number): string[] {
  const keys: string[] = [];
  const perGroup = new Map<number, number>();
  for (let i = 0; keys.length < groups * 2; i++) {
    const key = `seq-${i}`;
    const group = keyGroup(key, groups);
    if ((perGroup.get(group) ?? 0) >= 2) continue;
    perGroup.set(group, (perGroup.get(group) ?? 0) + 1);
    keys.push(key);
  }
  return keys;
}

/** The instance that issues group 0 now, by its readiness details. */
async function issuerOf(cluster: Cluster, group = 0, timeoutMs = 15_000): Promise<ClusterInstance> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for (const instance of cluster.instances) {
      if (!instance.running) continue;
      const state = await sequenceReadiness(instance);
      if ((state?.details.issuing as number[] | undefined)?.includes(group)) return instance;
    }
    if (Date.now() >= until) throw new Error(`no issuer of group ${group} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** Restores the row of `key` as a dump taken earlier would: deleted and inserted again. */
async function restoreRow(db: TestDatabase, key: string, maxId: bigint): Promise<void> {
  const session = await db.connect();
  try {
    await session.query('START TRANSACTION');
    await session.query('DELETE FROM leaf_alloc WHERE biz_tag = ?', [key]);
    await session.query(
      `INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, ${maxId.toString()}, 1000)`,
      [key],
    );
    await session.query('COMMIT');
  } finally {
    await session.end();
  }
}

async function maxIdOf(db: TestDatabase, key: string): Promise<bigint> {
  const rows = await db.query<{ max_id: string }>(
    'SELECT CAST(max_id AS CHAR) AS max_id FROM leaf_alloc WHERE biz_tag = ?',
    [key],
  );
  return BigInt(rows[0]!.max_id);
}

function endpointOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || 3306) };
}

/** Runs one fault of issue 25 against three instances serving sequence keys. */
export async function sequenceClusterScenario(
  db: TestDatabase,
  fault: SequenceClusterFault,
  size: ScenarioSize = 'ci',
): Promise<SequenceClusterResult> {
  const settings = SIZES[size];
  const groups = fault === 'spread' ? 4 : 1;
  const keys = fault === 'spread' ? keysCovering(groups) : ['seq'];
  for (const key of keys) {
    await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 1000)', [key]);
  }
  const privateZk = fault === 'zookeeper-wipe' ? await ZooKeeperServer.start() : null;
  const ports = [await sparePort(), await sparePort(), await sparePort(), await sparePort()];
  const proxies = new Proxies();
  await proxies.start(
    4,
    privateZk ? { host: '127.0.0.1', port: privateZk.port } : zookeeperEndpoint(),
    fault === 'database-cut' || fault === 'row-lock' ? endpointOf(db.url) : null,
    fault === 'http-cut' ? ports : null,
  );
  const namespace = `seqf${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const startedAt = Date.now();
  const env = (_name: string, index: number): Record<string, string> => {
    const dbUrl = new URL(db.url);
    if (fault === 'database-cut' || fault === 'row-lock') {
      dbUrl.hostname = '127.0.0.1';
      dbUrl.port = String(proxies.db[index]!.port);
    }
    return {
      PORT: String(ports[index]),
      // The app listens on loopback only: the default forwarding address must follow.
      HOST: '127.0.0.1',
      LEAF_DB_URL: dbUrl.toString(),
      LEAF_NAME: namespace,
      LEAF_SNOWFLAKE_ENABLED: 'false',
      LEAF_SEQUENCE_ENABLED: 'true',
      // The election's ZooKeeper only (no LEAF_ZK_ADDRESS): the high-water mark follows it.
      LEAF_SEQUENCE_ZK: `127.0.0.1:${proxies.zk[index]!.port}`,
      LEAF_SEQUENCE_GROUPS: String(groups),
      LEAF_SEQUENCE_SESSION_TIMEOUT_MS: String(sessionMsOf(fault)),
      LEAF_SEQUENCE_LEASE_MARGIN_MS: String(LEASE_MARGIN_MS),
      LEAF_SEQUENCE_HEARTBEAT_MS: String(HEARTBEAT_MS),
      LEAF_SEQUENCE_HAND_OVER_AFTER_MS: String(HAND_OVER_MS),
      ...(fault === 'http-cut'
        ? { LEAF_SEQUENCE_ADVERTISE: `http://127.0.0.1:${proxies.http[index]!.port}` }
        : {}),
      ...(fault === 'restore-unmarked' ? { LEAF_SEGMENT_HIGH_WATER_ZK: 'off' } : {}),
      // Small ranges: allocations follow the restore within the run.
      ...(fault.startsWith('restore') ? { LEAF_SEGMENT_MAX_STEP: '5000' } : {}),
      ...(fault === 'row-lock'
        ? { LEAF_SEGMENT_HIGH_WATER_ZK_TIMEOUT_MS: String(ROW_LOCK_MARK_TIMEOUT_MS) }
        : {}),
    };
  };
  const cluster = Cluster.create({ size: 4, defaults: 'deployer', env });
  const instances = cluster.instances.slice(0, 3);
  const fresh = cluster.instances[3]!;
  const history = new History();
  const facts: Record<string, unknown> = {};
  let faulted: ClusterInstance | null = null;
  let loads: Load[] = [];
  /** When the wiped ZooKeeper answered again. */
  let answering: number | null = null;
  try {
    if (fault === 'spread') {
      // The first instance alone takes every group; the others join once it serves.
      await instances[0]!.start();
      await allReady([instances[0]!], 4 * sessionMsOf(fault));
      facts.issuingBeforeOthers = await issuingBy(instances);
      await Promise.all(instances.slice(1).map((instance) => instance.start()));
    } else {
      await Promise.all(instances.map((instance) => instance.start()));
    }
    facts.readyAfterStartMs = await allReady(instances, 4 * sessionMsOf(fault));
    const load = (instance: ClusterInstance) =>
      Load.start({
        targets: [instance],
        routes: keys.flatMap((key) => [sequenceRoute('get', key), sequenceRoute('ids', key, 10)]),
        history,
        concurrency: settings.concurrency,
        durationMs: 600_000,
        failurePauseMs: 20,
      });
    loads = instances.map(load);
    await sleep(settings.loadMs / 3);
    switch (fault) {
      case 'restore':
      case 'restore-unmarked': {
        const dumped = await maxIdOf(db, keys[0]!);
        // IDs above the dump served before it comes back.
        const movedBy = Date.now() + 20_000;
        while ((await maxIdOf(db, keys[0]!)) <= dumped + 5000n && Date.now() < movedBy) {
          await sleep(100);
        }
        faulted = await issuerOf(cluster);
        facts.dumpedMaxId = dumped.toString();
        facts.maxIdBeforeRestore = (await maxIdOf(db, keys[0]!)).toString();
        await restoreRow(db, keys[0]!, dumped);
        if (fault === 'restore') {
          // The next allocation is another instance's: only the mark remembers the IDs above.
          await sleep(1000);
          await faulted.kill();
          facts.successor = (await issuerOf(cluster)).name;
        }
        break;
      }
      case 'zookeeper-wipe': {
        faulted = await issuerOf(cluster);
        await privateZk!.wipe();
        answering = Date.now();
        // A fresh instance joins at once: the wiped ZooKeeper would elect it first.
        await fresh.start();
        loads.push(load(fresh));
        // Readiness tells when each instance serves again (the old ones need a new session).
        await allReady([...instances, fresh], 3 * WIPE_SESSION_MS);
        facts.allReadyAgainMs = Date.now() - answering;
        break;
      }
      case 'database-cut': {
        faulted = await issuerOf(cluster);
        const index = cluster.instances.indexOf(faulted);
        proxies.db[index]!.refuse(true);
        await sleep(settings.cutMs);
        proxies.db[index]!.refuse(false);
        facts.successor = (await issuerOf(cluster)).name;
        break;
      }
      case 'http-cut': {
        faulted = await issuerOf(cluster);
        const index = cluster.instances.indexOf(faulted);
        const others = instances.filter((instance) => instance !== faulted);
        const cutAt = Date.now();
        proxies.http[index]!.refuse(true);
        facts.othersNotReadyAfterMs = await untilReadiness(others, 503, cutAt, settings.cutMs);
        facts.issuerReadyDuringCut = (await sequenceReadiness(faulted))?.status === 200;
        await sleep(Math.max(0, settings.cutMs - (Date.now() - cutAt)));
        const healedAt = Date.now();
        proxies.http[index]!.refuse(false);
        facts.othersReadyAgainAfterMs = await untilReadiness(others, 200, healedAt, 15_000);
        break;
      }
      case 'row-lock': {
        // The issuer's connection goes silent inside an allocation, holding the row lock (a
        // vanished host): the issuer hands over once its buffer runs dry, and its successor's
        // first allocation waits until the database drops the silent session.
        faulted = await issuerOf(cluster);
        const stall = proxies.stalls[cluster.instances.indexOf(faulted)]!;
        stall.armed = true;
        const armedAt = Date.now();
        while (stall.firedAt === null && Date.now() - armedAt < 30_000) await sleep(20);
        if (stall.firedAt === null) throw new Error('the issuer allocated nothing in 30 s');
        await waitForLock(db, keys[0]!, 5_000);
        facts.lockHeldAfterArmingMs = stall.firedAt - armedAt;
        await sleep(ROW_LOCK_WATCH_MS);
        facts.successor = (await issuerOf(cluster)).name;
        break;
      }
      case 'spread': {
        facts.balancedAfterMs = await untilBalanced(
          instances,
          groups,
          4 * SEQUENCE_TEST_SESSION_MS,
        );
        break;
      }
      case 'host-default':
        break;
    }
    await sleep(settings.loadMs / 3);
    if (fault === 'restore' && faulted) await faulted.start();
    await sleep(settings.loadMs / 3);
    facts.issuingAtEnd = await issuingBy(cluster.instances);
    await Promise.all(loads.map((l) => l.stop()));
    await Promise.all(cluster.instances.map((instance) => instance.stop()));
  } finally {
    await Promise.all(loads.map((l) => l.stop()));
    await cluster.dispose();
    await proxies.stop();
    await privateZk?.dispose();
  }
  if (answering !== null) facts.servingAgainMs = servingAgain(history, answering);
  const longestGapMsByInstance = Object.fromEntries(
    Object.entries(availability(history).byProcess).map(([name, counts]) => [
      name,
      counts.longestGapMs,
    ]),
  );
  const logs = Object.fromEntries(cluster.instances.map((i) => [i.name, i.output]));
  const result = sequenceReport(`sequence-${fault}`, size, startedAt, history, faulted, {
    ...facts,
    longestGapMsByInstance,
  });
  return { ...result, longestGapMsByInstance, logs };
}

/**
 * Per instance: ms from `from` until it served again for good, i.e. to its first success after
 * its last failure that began after `from` (its first success after `from` when none failed).
 */
function servingAgain(history: History, from: number): Record<string, number> {
  const lastFail = new Map<string, number>();
  for (const operation of history.operations) {
    if (operation.type === 'ok' || operation.invokeMs < from) continue;
    lastFail.set(
      operation.process,
      Math.max(lastFail.get(operation.process) ?? from, operation.completeMs),
    );
  }
  const again: Record<string, number> = {};
  for (const operation of history.operations) {
    if (operation.type !== 'ok') continue;
    const after = lastFail.get(operation.process) ?? from;
    if (operation.invokeMs < after) continue;
    const at = operation.completeMs - from;
    if (again[operation.process] === undefined || at < again[operation.process]!) {
      again[operation.process] = at;
    }
  }
  return again;
}

/** ms from `from` until every instance's sequence readiness is `status`. */
async function untilReadiness(
  instances: readonly ClusterInstance[],
  status: number,
  from: number,
  timeoutMs: number,
): Promise<number> {
  for (;;) {
    const states = await Promise.all(instances.map(sequenceReadiness));
    if (states.every((s) => s?.status === status)) return Date.now() - from;
    if (Date.now() - from > timeoutMs) {
      throw new Error(`readiness not ${status} within ${timeoutMs} ms: ${JSON.stringify(states)}`);
    }
    await sleep(100);
  }
}

/** The groups each running instance issues, by name. */
async function issuingBy(instances: readonly ClusterInstance[]): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const instance of instances) {
    if (!instance.running) continue;
    const state = await sequenceReadiness(instance);
    out[instance.name] = (state?.details.issuing as number[] | undefined) ?? [];
  }
  return out;
}

/** ms until every group has one issuer and no instance issues two more than another. */
async function untilBalanced(
  instances: readonly ClusterInstance[],
  groups: number,
  timeoutMs: number,
): Promise<number> {
  const from = Date.now();
  for (;;) {
    const counts = Object.values(await issuingBy(instances));
    const total = counts.reduce((sum, list) => sum + list.length, 0);
    const sizes = counts.map((list) => list.length);
    if (total === groups && Math.max(...sizes) - Math.min(...sizes) <= 1) return Date.now() - from;
    if (Date.now() - from > timeoutMs) {
      throw new Error(`groups not spread within ${timeoutMs} ms: ${JSON.stringify(counts)}`);
    }
    await sleep(200);
  }
}

/** Waits until a transaction holds the row lock of `key` (seen in InnoDB's lock tables). */
async function waitForLock(db: TestDatabase, key: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const rows = await db.query<{ n: number | string }>(
      'SELECT COUNT(*) AS n FROM information_schema.INNODB_TRX WHERE trx_rows_locked > 0',
    );
    if (Number(rows[0]!.n) > 0) return;
    if (Date.now() > until) throw new Error(`no transaction held the row of ${key}`);
    await sleep(20);
  }
}
