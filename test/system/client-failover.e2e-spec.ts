/**
 * The remote client riding through failures (docs/client.md, "Failover"): two client
 * processes and two server instances (real processes) on MariaDB. At about a third of the run
 * one server is killed with `kill -9`; then the database is cut off for 5 s (the servers reach
 * it through a TCP proxy that refuses every connection meanwhile; the shared MariaDB itself
 * cannot be stopped). Every ID handed out by either client is recorded:
 *
 * - every ID is distinct across both clients;
 * - per client and per tag, IDs increase in the order they were handed out;
 * - ranges received ≤ IDs ÷ range size + 2 per key per client (the ranges still cached at
 *   the end), and range requests sent exceed that only by the failed attempts, at most about
 *   one per server per back-off period;
 * - both clients serve again after the outage, and every error they saw is a typed LeafError.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, killAllAppProcesses } from '../support/app-process';
import { sleep } from '../support/id-load';
import { describeWithServices } from '../support/services';
import { TcpProxy } from '../support/tcp-proxy';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const ROOT = join(__dirname, '..', '..');
const TAGS = ['client-a', 'client-b'];
/**
 * Larger than the tags' step (1000): the servers serve each range from a fresh allocation
 * (docs/design.md, "Ordering"), so they buffer nothing for these tags and the database
 * outage reaches the clients once their own ranges run out.
 */
const RANGE = 5000;
const RUN_MS = 24_000;
const KILL_AT_MS = 8_000;
const OUTAGE_AT_MS = 12_000;
const OUTAGE_MS = 5_000;

interface WorkerResult {
  ids: Record<string, string[]>;
  errors: Record<string, number>;
  tail: number;
  rangeRequests: number;
  rangesReceived: number;
}

/**
 * Runs test/support/client-worker.ts as its own process: `started` resolves once it takes
 * IDs (its run starts then), `result` with what it wrote.
 */
function runClient(
  servers: string[],
  out: string,
): { started: Promise<void>; result: Promise<WorkerResult> } {
  const child = spawn(
    process.execPath,
    [
      '-r',
      'ts-node/register/transpile-only',
      '-r',
      'tsconfig-paths/register',
      'test/support/client-worker.ts',
      out,
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        LEAF_CLIENT_SERVERS: servers.join(','),
        LEAF_CLIENT_TAGS: TAGS.join(','),
        LEAF_CLIENT_RUN_MS: String(RUN_MS),
        LEAF_CLIENT_RANGE: String(RANGE),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const started = new Promise<void>((resolve) => {
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('STARTED')) resolve();
    });
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), RUN_MS + 45_000);
  const result = new Promise<WorkerResult>((resolve, reject) => {
    child.on('close', (code) => {
      clearTimeout(killer);
      if (code !== 0) {
        reject(new Error(`client exited with ${code}: ${stderr}`));
        return;
      }
      resolve(JSON.parse(readFileSync(out, 'utf8')) as WorkerResult);
    });
  });
  return { started, result };
}

describeWithServices(
  ['mysql'],
  'the remote client through a server crash and a database outage',
  () => {
    let db: TestDatabase;
    let proxy: TcpProxy;
    let dir: string;
    const servers: AppProcess[] = [];

    beforeAll(async () => {
      db = await createTestDatabase({ migrate: true });
      for (const tag of TAGS) {
        await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 1000)', [tag]);
      }
      proxy = new TcpProxy({ host: '127.0.0.1', port: Number(new URL(db.url).port || 3306) });
      await proxy.start();
      const url = new URL(db.url);
      url.port = String(proxy.port);
      dir = mkdtempSync(join(tmpdir(), 'leaf-client-failover-'));
      for (let i = 0; i < 2; i++) {
        servers.push(
          AppProcess.spawn(
            {
              PORT: '0',
              HOST: '127.0.0.1',
              LEAF_DB_URL: url.toString(),
              LEAF_SNOWFLAKE_ENABLED: 'false',
              LEAF_ACCESS_LOG: 'false',
              LEAF_STATE_DIR: join(dir, `server-${i}`),
            },
            { timeoutMs: RUN_MS + 90_000 },
          ),
        );
      }
    }, 60_000);

    afterAll(async () => {
      await killAllAppProcesses();
      await proxy?.stop();
      await db?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, 30_000);

    it(
      'every ID distinct, per client increasing per tag, ranges requested ≈ IDs ÷ range size',
      async () => {
        const urls = await Promise.all(
          servers.map(async (server) => `http://127.0.0.1:${await server.listening()}`),
        );
        const clients = [0, 1].map((i) => runClient(urls, join(dir, `client-${i}.json`)));
        // The timeline starts when both clients run (a loaded machine starts processes slowly).
        await Promise.race([
          Promise.all(clients.map((client) => client.started)),
          Promise.all(clients.map((client) => client.result)), // a client that failed to start
        ]);
        const startedAt = Date.now();

        await sleep(KILL_AT_MS);
        servers[0].signal('SIGKILL');
        await sleep(OUTAGE_AT_MS - (Date.now() - startedAt));
        proxy.refuse(true);
        await sleep(OUTAGE_MS);
        proxy.refuse(false);

        const results = await Promise.all(clients.map((client) => client.result));
        const seen = new Set<string>();
        let duplicates = 0;
        let total = 0;
        for (const [c, result] of results.entries()) {
          let inversions = 0;
          for (const tag of TAGS) {
            const ids = result.ids[tag].map(BigInt);
            for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) inversions++;
            for (const id of result.ids[tag]) {
              if (seen.has(`${tag}:${id}`)) duplicates++;
              seen.add(`${tag}:${id}`);
            }
            total += ids.length;
          }
          const issued = TAGS.reduce((sum, tag) => sum + result.ids[tag].length, 0);
          const budget = Math.ceil(issued / RANGE) + 2 * TAGS.length;
          // Failed attempts: at most one per server per back-off period — the killed server
          // about once a second (maxBackoffMs), each server every 200 ms or more in the outage.
          const failedBudget = 2 * Math.ceil(RUN_MS / 1000) + 2 * Math.ceil(OUTAGE_MS / 200);
          console.log(
            `client ${c}: ${issued} IDs, ${result.rangesReceived} ranges received (budget ${budget}), ` +
              `${result.rangeRequests} requests sent, errors ${JSON.stringify(result.errors)}, ${result.tail} IDs in the last 3 s`,
          );
          expect(inversions).toBe(0);
          expect(issued).toBeGreaterThan(20 * RANGE);
          expect(result.rangesReceived).toBeLessThanOrEqual(budget);
          expect(result.rangeRequests - result.rangesReceived).toBeLessThanOrEqual(failedBudget);
          expect(result.tail).toBeGreaterThan(0);
          // The outage was felt (the clients' ranges ran out), and reported as typed errors.
          expect(Object.keys(result.errors).length).toBeGreaterThan(0);
          for (const code of Object.keys(result.errors)) expect(code).toMatch(/^LEAF_[A-Z_]+$/);
        }
        expect(duplicates).toBe(0);
        expect(total).toBe(seen.size);
        // The surviving server served through to the end.
        expect(servers[1].alive).toBe(true);
      },
      RUN_MS + 60_000,
    );
  },
);
