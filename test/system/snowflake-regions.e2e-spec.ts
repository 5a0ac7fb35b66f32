/**
 * Two regions, one region registry (docs/operations.md, "Regions"): each region leases its
 * snowflake worker IDs in a PostgreSQL database of its own (`LEAF_DB_URL`), and its
 * data-centre ID from one registry database (`LEAF_REGION_DB_URL`) reached through a TCP
 * proxy per region that the test cuts. Application processes started by environment, short
 * region leases (5 s, margin 1 s, renewal every 0.5 s), every ID recorded:
 *
 * - the same data-centre ID asked by the second region: its start fails (`LEAF_DATA_CENTER_HELD`);
 * - the registry cut for less than the lease: both regions keep serving;
 * - one region's registry cut past the lease: it stops (readiness 503) before its lease could
 *   end, the other serves on, and it serves again once the registry is back;
 * - a region paused (SIGSTOP) past its lease while the other region takes its data-centre ID:
 *   after it wakes it issues nothing more, and every ID it issued lies at or before the floor
 *   the taker starts after.
 *
 * Checked throughout: no ID twice across regions.
 */
import { AppProcess } from '../support/app-process';
import {
  createPostgresTestDatabase,
  type PostgresTestDatabase,
} from '../support/postgres-database';
import { describeWithServices } from '../support/services';
import { TcpProxy } from '../support/tcp-proxy';
import { ClusterInstance } from './harness/cluster';

jest.setTimeout(240_000);

const EPOCH = 1288834974657n;
const LEASE_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Timestamp and data-centre ID of an ID of Leaf's layout with 2 data-centre bits. */
function decode(id: bigint): { ms: number; dc: number } {
  return { ms: Number((id >> 22n) + EPOCH), dc: Number((id >> 20n) & 3n) };
}

/** Requests IDs from `instance` in a loop, recording every one and the answers' statuses. */
class Recorder {
  readonly ids: bigint[] = [];
  readonly statuses = new Map<number, number>();
  private running = true;
  private readonly done: Promise<void>;

  constructor(private readonly instance: ClusterInstance) {
    this.done = Promise.all([0, 1].map(() => this.loop())).then(() => undefined);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const base = this.instance.baseUrl();
      const answer = base
        ? await fetch(`${base}/api/snowflake/ids/k?count=5`, {
            signal: AbortSignal.timeout(2_000),
          }).catch(() => null)
        : null;
      if (answer) {
        this.statuses.set(answer.status, (this.statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 200) {
          const body = (await answer.json()) as { ids: string[] };
          for (const id of body.ids) this.ids.push(BigInt(id));
        } else await answer.body?.cancel();
      }
      await sleep(answer?.status === 200 ? 5 : 50);
    }
  }
}

async function readiness(instance: ClusterInstance): Promise<number> {
  const answer = await fetch(`${instance.baseUrl()}/health/ready`).catch(() => null);
  await answer?.body?.cancel();
  return answer?.status ?? 0;
}

/** Waits until `instance`'s readiness answers `status`; the time it took. */
async function readinessBecomes(
  instance: ClusterInstance,
  status: number,
  timeoutMs: number,
): Promise<number> {
  const started = Date.now();
  while ((await readiness(instance)) !== status) {
    if (Date.now() - started > timeoutMs)
      throw new Error(
        `${instance.name}: readiness never ${status}\n${instance.output.slice(-3000)}`,
      );
    await sleep(100);
  }
  return Date.now() - started;
}

describeWithServices(['postgres'], 'system (CI subset): two regions, one region registry', () => {
  const databases: PostgresTestDatabase[] = [];
  const proxies: TcpProxy[] = [];
  const instances: ClusterInstance[] = [];
  let registry: PostgresTestDatabase;
  let eu: ClusterInstance;
  let us: ClusterInstance;
  let env: (region: 'eu' | 'us' | 'ap', dataCenterId: number) => Record<string, string>;
  const recorders: Recorder[] = [];

  beforeAll(async () => {
    const [euDb, usDb] = await Promise.all([
      createPostgresTestDatabase(),
      createPostgresTestDatabase(),
    ]);
    registry = await createPostgresTestDatabase();
    databases.push(euDb, usDb, registry);
    const target = new URL(registry.url);
    for (const _ of ['eu', 'us']) {
      const proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      await proxy.start();
      proxies.push(proxy);
    }
    env = (region, dataCenterId) => {
      const registryUrl = new URL(registry.url);
      registryUrl.hostname = '127.0.0.1';
      registryUrl.port = String(proxies[region === 'eu' ? 0 : 1]!.port);
      return {
        LEAF_DB_URL: (region === 'eu' ? euDb : usDb).url,
        LEAF_DB_MIGRATE: 'true',
        LEAF_COORDINATION: 'database',
        LEAF_SNOWFLAKE_DATA_CENTER_BITS: '2',
        LEAF_REGION: region,
        LEAF_REGION_DB_URL: registryUrl.toString(),
        LEAF_REGION_DATA_CENTER_ID: String(dataCenterId),
        LEAF_REGION_LEASE_MS: String(LEASE_MS),
        LEAF_REGION_RENEW_MS: '500',
        LEAF_REGION_MARGIN_MS: '1000',
        LEAF_SNOWFLAKE_STARTUP_MAX_WAIT_MS: '10000',
      };
    };
    eu = ClusterInstance.create('eu-1', env('eu', 1));
    instances.push(eu);
    await eu.start();
  });

  afterAll(async () => {
    await Promise.all(recorders.map((r) => r.stop()));
    await Promise.all(instances.map((i) => i.dispose()));
    await Promise.all(proxies.map((p) => p.stop()));
    await Promise.all(databases.map((d) => d.drop()));
  });

  /** Every ID recorded, across regions: none twice. */
  function expectNoDuplicates(): number {
    const all = recorders.flatMap((r) => r.ids);
    expect(all.length - new Set(all).size).toBe(0);
    return all.length;
  }

  it('the second region asking for the same data-centre ID is refused at start (LEAF_DATA_CENTER_HELD, holder named); with its own it starts', async () => {
    const refused = await AppProcess.run(
      { PORT: '0', HOST: '127.0.0.1', ...env('us', 1) },
      { timeoutMs: 60_000 },
    );
    expect(refused.code).not.toBe(0);
    expect(refused.timedOut).toBe(false);
    expect(refused.stdout + refused.stderr).toMatch(
      /LEAF_DATA_CENTER_HELD[\s\S]*region \\?"eu\\?"/,
    );
    us = ClusterInstance.create('us-1', env('us', 2));
    instances.push(us);
    await us.start();
    recorders.push(new Recorder(eu), new Recorder(us));
    await sleep(1_000);
    expect(recorders.every((r) => r.ids.length > 0)).toBe(true);
  });

  it('a registry cut shorter than the lease: both regions keep serving, no ID twice', async () => {
    for (const proxy of proxies) proxy.refuse(true);
    const before = recorders.map((r) => r.ids.length);
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline) {
      expect([await readiness(eu), await readiness(us)]).toEqual([200, 200]);
      await sleep(200);
    }
    for (const proxy of proxies) proxy.refuse(false);
    expect(recorders.map((r, i) => r.ids.length > before[i]!)).toEqual([true, true]);
    await sleep(1_500);
    expect(expectNoDuplicates()).toBeGreaterThan(0);
  });

  it('one region cut past its lease stops (503) before its lease could end, the other serves on; back once the registry is', async () => {
    const cutAt = Date.now();
    proxies[0]!.refuse(true);
    // Its last renewal was at most 0.5 s before the cut: it must stop within lease − margin of it.
    const tookMs = await readinessBecomes(eu, 503, LEASE_MS + 2_000);
    expect(tookMs).toBeLessThan(LEASE_MS);
    const euCount = recorders[0]!.ids.length;
    const usCount = recorders[1]!.ids.length;
    await sleep(LEASE_MS - (Date.now() - cutAt) + 1_500); // well past eu's lease
    expect(await readiness(us)).toBe(200);
    expect(recorders[1]!.ids.length).toBeGreaterThan(usCount);
    // Nothing of eu's issued after the proof ran out.
    const lastEu = Math.max(...recorders[0]!.ids.map((id) => decode(id).ms));
    expect(lastEu).toBeLessThan(cutAt + LEASE_MS);
    expect(recorders[0]!.ids.length - euCount).toBeLessThanOrEqual(10);
    proxies[0]!.refuse(false);
    await readinessBecomes(eu, 200, 15_000);
    expectNoDuplicates();
  });

  it('a region paused past its lease while the other takes its data-centre ID: no ID twice when it wakes', async () => {
    eu.pause();
    const pausedAt = Date.now();
    // A us instance asking for data-centre 1: refused while eu's lease lives, started once it ended.
    const taker = ClusterInstance.create('us-2', env('us', 1));
    instances.push(taker);
    for (;;) {
      try {
        await taker.start();
        break;
      } catch (error) {
        expect(taker.output).toMatch(/LEAF_DATA_CENTER_HELD/);
        if (Date.now() - pausedAt > 30_000) throw error;
        await sleep(500);
      }
    }
    expect(Date.now() - pausedAt).toBeGreaterThan(LEASE_MS - 1_000);
    const takerIds = new Recorder(taker);
    recorders.push(takerIds);
    await sleep(1_000);
    eu.resume();
    await sleep(3_000); // eu's renewal finds another region's epoch
    expect(await readiness(eu)).toBe(503);
    const [row] = await registry.query<{ region: string; floor_ms: string }>(
      'SELECT region, CAST(floor_ms AS TEXT) AS floor_ms FROM leaf_region_lease WHERE data_center_id = 1',
    );
    expect(row!.region).toBe('us');
    const floor = Number(row!.floor_ms);
    const euMs = recorders[0]!.ids.map((id) => decode(id)).filter((d) => d.dc === 1);
    const takerMs = takerIds.ids.map((id) => decode(id));
    expect(takerMs.length).toBeGreaterThan(0);
    expect(takerMs.every((d) => d.dc === 1 && d.ms > floor)).toBe(true);
    expect(Math.max(...euMs.map((d) => d.ms))).toBeLessThanOrEqual(floor);
    await Promise.all(recorders.map((r) => r.stop()));
    const total = expectNoDuplicates();
    process.stdout.write(`two regions: ${total} IDs recorded, none twice\n`);
  });

  it('snowflake mode alone (no allocation database, a worker ID by hand) leases its data-centre ID too', async () => {
    const { LEAF_DB_URL: _allocation, LEAF_COORDINATION: _coordination, ...regional } = env('ap', 3);
    const alone = ClusterInstance.create('ap-1', {
      ...regional,
      LEAF_REGION_DB_URL: registry.url,
      LEAF_SEGMENT_ENABLED: 'false',
      LEAF_WORKER_ID: '5',
    });
    instances.push(alone);
    await alone.start();
    expect(await readiness(alone)).toBe(200);
    const ids = new Recorder(alone);
    await sleep(1_000);
    await ids.stop();
    expect(ids.ids.length).toBeGreaterThan(0);
    expect(ids.ids.every((id) => decode(id).dc === 3)).toBe(true);
    const [row] = await registry.query<{ region: string }>(
      'SELECT region FROM leaf_region_lease WHERE data_center_id = 3',
    );
    expect(row!.region).toBe('ap');
  });
});
