import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, killAllAppProcesses } from './app-process';
import { HttpClient } from './http-client';

/** Leaf's layout: the worker ID of a snowflake ID. */
const workerOf = (id: bigint) => Number((id >> 12n) & 1023n);
/** Leaf's layout: the millisecond of a snowflake ID (Twitter's epoch). */
const timestampOf = (id: bigint) => Number(id >> 22n) + 1_288_834_974_657;

const ADMIN_TOKEN = 'lease-scenario-admin-token';

/** Lease settings short enough for a test: 3 s leases, renewed every second, 0.5 s margin. */
const LEASE_ENV = {
  LEAF_SNOWFLAKE_LEASE_MS: '3000',
  LEAF_SNOWFLAKE_HEARTBEAT_MS: '1000',
  LEAF_SNOWFLAKE_LEASE_MARGIN_MS: '500',
};

/** One instance of the app as a deployer runs it, with what it issued. */
class Instance {
  readonly ids: bigint[] = [];
  readonly refusals: Array<{ status: number; body: string }> = [];
  process: AppProcess | null = null;
  client: HttpClient | null = null;
  private pulling = false;
  private loop: Promise<void> | null = null;

  constructor(
    readonly label: string,
    private readonly env: Record<string, string>,
  ) {}

  async start(): Promise<number> {
    this.process = AppProcess.spawn(this.env, { timeoutMs: 120_000 });
    const port = await this.process.listening();
    this.client?.close();
    this.client = new HttpClient(`http://127.0.0.1:${port}`, 2);
    return port;
  }

  /** Asks for IDs in a loop until {@link stopPulling}; records every ID and every refusal. */
  pull(): void {
    this.pulling = true;
    const client = this.client!;
    this.loop = (async () => {
      while (this.pulling) {
        try {
          const answer = await client.send('/api/snowflake/ids/k?count=20');
          if (answer.status === 200) {
            for (const id of (JSON.parse(answer.body) as { ids: string[] }).ids)
              this.ids.push(BigInt(id));
          } else {
            this.refusals.push({ status: answer.status, body: answer.body });
          }
        } catch {
          // The process was killed or paused: its connection is gone.
          if (!this.process?.alive) return;
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
  }

  async stopPulling(): Promise<void> {
    this.pulling = false;
    await this.loop;
  }

  async readiness(): Promise<{ status: number; details: Record<string, unknown> }> {
    const answer = await this.client!.send('/health/ready/snowflake');
    const body = JSON.parse(answer.body) as {
      details?: { snowflake?: Record<string, unknown> };
      error?: { snowflake?: Record<string, unknown> };
    };
    return {
      status: answer.status,
      details: body.details?.snowflake ?? body.error?.snowflake ?? {},
    };
  }

  get log(): string {
    return (this.process?.stdout ?? '') + (this.process?.stderr ?? '');
  }
}

/** What {@link runDatabaseLeaseScenario} measured. */
export interface DatabaseLeaseFigures {
  readonly reclaimMs: number;
  readonly takeoverMs: number;
  readonly gracefulRestartMs: number;
  readonly ids: number;
}

/**
 * Three instances on one database with no ZooKeeper (`NODE_ENV=production`, environment
 * only), every other worker ID held by a live lease so that a worker ID must be reclaimed:
 * kill -9 and restart of one; one paused (SIGSTOP) past its lease while another claims its
 * worker ID, then resumed. Checks every ID recorded for duplicates and the paused and the
 * successor's milliseconds for overlap, and returns the reclaim times measured.
 */
export async function runDatabaseLeaseScenario(
  url: string,
  fillOthers: (fromWorkerId: number) => Promise<void>,
): Promise<DatabaseLeaseFigures> {
  const dirs: string[] = [];
  const instance = (label: string) => {
    const stateDir = mkdtempSync(join(tmpdir(), `leaf-lease-${label}-`));
    dirs.push(stateDir);
    return new Instance(label, {
      NODE_ENV: 'production',
      LEAF_DB_URL: url,
      LEAF_DB_MIGRATE: 'true',
      LEAF_SNOWFLAKE_ADVERTISE: `${label}.test:8080`,
      LEAF_STATE_DIR: stateDir,
      PORT: '0',
      LEAF_LOG_LEVEL: 'info',
      LEAF_ADMIN_TOKEN: ADMIN_TOKEN,
      // LEAF_TEST_LEASE_DEFAULTS=1: the library's defaults (10 s leases), for the figure.
      ...(process.env.LEAF_TEST_LEASE_DEFAULTS ? {} : LEASE_ENV),
    });
  };
  const all: Instance[] = [];
  try {
    // Worker IDs 3..1023 are held elsewhere: this cluster has three.
    await fillOthers(3);
    const [a, b, c] = ['a', 'b', 'c'].map(instance) as [Instance, Instance, Instance];
    all.push(a, b, c);
    await a.start(); // the first one applies the migrations
    await Promise.all([b.start(), c.start()]);
    const ready = await Promise.all(all.map((i) => i.readiness()));
    for (const r of ready) {
      expect(r.status).toBe(200);
      expect(r.details).toMatchObject({ mode: 'database', coordination: 'database' });
    }
    expect(ready.map((r) => r.details.workerId).sort()).toEqual([0, 1, 2]);
    expect(a.log).toMatch(/snowflake on the database/);
    // The operators' view: the lease rows, this cluster's three live.
    const listed = await a.client!.send('/admin/workers', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const workers = (JSON.parse(listed.body) as { workers: Array<Record<string, unknown>> })
      .workers;
    expect(workers.filter((w) => w.alive).map((w) => w.heldBy)).toEqual(
      expect.arrayContaining(['a.test:8080', 'b.test:8080', 'c.test:8080']),
    );
    for (const i of all) i.pull();
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    // kill -9 and restart with the same identity: it waits for its old row to expire.
    const cWorker = (await c.readiness()).details.workerId;
    await c.stopPulling();
    const killedAt = Date.now();
    await c.process!.stop('SIGKILL');
    const c2 = new Instance('c', { ...(c as unknown as { env: Record<string, string> }).env });
    all.push(c2);
    await c2.start();
    const reclaimMs = Date.now() - killedAt;
    expect((await c2.readiness()).details.workerId).toBe(cWorker);
    c2.pull();

    // SIGSTOP a past its lease; d claims a's worker ID meanwhile.
    const aWorker = (await a.readiness()).details.workerId;
    a.process!.signal('SIGSTOP');
    const pausedAt = Date.now();
    const d = instance('d');
    all.push(d);
    await d.start();
    const takeoverMs = Date.now() - pausedAt;
    expect((await d.readiness()).details.workerId).toBe(aWorker);
    d.pull();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    a.process!.signal('SIGCONT');
    // Resumed: it refuses with the typed 503, and readiness says so.
    const deadline = Date.now() + 5_000;
    while (a.refusals.length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    // Its next renewal (a heartbeat away, later on a busy machine) finds the row taken.
    let readinessA = await a.readiness();
    for (let waited = 0; waited < 15_000; waited += 100) {
      if (/claimed by another instance/.test(JSON.stringify(readinessA))) break;
      expect(readinessA.status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 100));
      readinessA = await a.readiness();
    }
    expect(readinessA.status).toBe(503);
    expect(JSON.stringify(readinessA)).toMatch(/claimed by another instance/);
    expect(a.refusals[0]).toMatchObject({ status: 503 });
    expect(a.refusals[0]!.body).toMatch(/LEAF_TIME_LEASE_UNAVAILABLE/);

    // A graceful stop releases the row: a restart takes it back without waiting.
    const bWorker = (await b.readiness()).details.workerId;
    await b.stopPulling();
    expect((await b.process!.stop()).code).toBe(0);
    const released = await d.client!.send('/admin/workers', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const bRow = (
      JSON.parse(released.body) as { workers: Array<{ workerId: number; alive: boolean }> }
    ).workers.find((w) => w.workerId === bWorker);
    expect(bRow?.alive).toBe(false);
    const restartedAt = Date.now();
    const b2 = new Instance('b', { ...(b as unknown as { env: Record<string, string> }).env });
    all.push(b2);
    await b2.start();
    const gracefulRestartMs = Date.now() - restartedAt;
    expect((await b2.readiness()).details.workerId).toBe(bWorker);
    expect(b2.log).not.toMatch(/Waited \d+ ms/);
    b2.pull();
    await new Promise((resolve) => setTimeout(resolve, 300));

    await Promise.all(all.map((i) => i.stopPulling()));
    // Every ID of every process: no duplicate.
    const every = all.flatMap((i) => i.ids);
    expect(every.length).toBeGreaterThan(500);
    expect(new Set(every).size).toBe(every.length);
    // The paused holder's milliseconds and its successor's do not overlap.
    const aIds = a.ids.filter((id) => workerOf(id) === aWorker);
    const dIds = d.ids.filter((id) => workerOf(id) === aWorker);
    expect(aIds.length).toBeGreaterThan(0);
    expect(dIds.length).toBeGreaterThan(0);
    expect(Math.max(...aIds.map(timestampOf))).toBeLessThan(Math.min(...dIds.map(timestampOf)));
    // So do the killed holder's and its restart's.
    const cMax = Math.max(...c.ids.filter((id) => workerOf(id) === cWorker).map(timestampOf));
    expect(cMax).toBeLessThan(Math.min(...c2.ids.map(timestampOf)));

    const bMax = Math.max(...b.ids.filter((id) => workerOf(id) === bWorker).map(timestampOf));
    expect(bMax).toBeLessThan(Math.min(...b2.ids.map(timestampOf)));

    await Promise.all([b2, c2, d].map((i) => i.process!.stop()));
    return { reclaimMs, takeoverMs, gracefulRestartMs, ids: every.length };
  } finally {
    for (const i of all) i.client?.close();
    await killAllAppProcesses();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
