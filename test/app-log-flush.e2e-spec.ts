/**
 * The JSON logs are written asynchronously in batches (src/logging/logging.module.ts), and
 * no line is lost however the process ends. The application runs as a real process as a
 * deployer starts it (the build when it is fresh, configured by environment only, every
 * other variable unset); its stdout is read after it exited:
 *
 * - a graceful stop (SIGTERM) after N requests: exactly N access-log lines, one per request
 *   ID sent, then the shutdown lines;
 * - an uncaught error (thrown from a preloaded SIGUSR2 handler) right after N requests:
 *   exit code 1 and exactly N access-log lines;
 * - a refusal to start (the port is taken): exit code 1, and the lines logged before it;
 * - a quiet service: a lone request's line reaches stdout while the process still runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { LOG_FLUSH_INTERVAL_MS } from '../src/logging/logging.module';
import { AppProcess, freshestAppArgs, killAllAppProcesses } from './support/app-process';

/** Requests of each run: far more than one batch (4 KB is about 15 access-log lines). */
const REQUESTS = 3_000;
const CONNECTIONS = 16;
const PRELOAD = join(__dirname, 'support', 'uncaught-on-signal.js');

jest.setTimeout(60_000);

/** The JSON lines of a process's stdout; every line must be one whole JSON object. */
function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The access-log lines among them. */
function accessLines(stdout: string): Array<Record<string, unknown>> {
  return jsonLines(stdout).filter((line) => line.req !== undefined);
}

describe('JSON logs written in batches lose no line', () => {
  const dirs: string[] = [];
  let blocker: Server | null = null;
  afterAll(async () => {
    await killAllAppProcesses();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await new Promise<void>((resolve) => (blocker ? blocker.close(() => resolve()) : resolve()));
  });

  /** Starts the application on an ephemeral port with its state in a temp dir. */
  function spawn(env: Record<string, string> = {}, preload = false): AppProcess {
    const dir = mkdtempSync(join(tmpdir(), 'leaf-log-flush-'));
    dirs.push(dir);
    return AppProcess.spawn(
      {
        PORT: '0',
        HOST: '127.0.0.1',
        LEAF_DB_URL: `sqlite:${join(dir, 'leaf.sqlite')}`,
        LEAF_STATE_DIR: dir,
        LEAF_ACCESS_LOG: 'true',
        ...env,
      },
      { args: [...(preload ? ['-r', PRELOAD] : []), ...freshestAppArgs()], timeoutMs: 50_000 },
    );
  }

  /** Sends `count` ID requests over keep-alive connections, each with its own request ID. */
  async function sendRequests(port: number, count: number, prefix: string): Promise<string[]> {
    const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONNECTIONS });
    const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
    let next = 0;
    try {
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (next < ids.length) {
            const reqId = ids[next++];
            const path = `/api/${next % 2 ? 'segment' : 'snowflake'}/get/leaf-segment-test`;
            const res = await pool.request({
              path,
              method: 'GET',
              headers: { 'x-request-id': reqId },
            });
            await res.body.text();
            expect(res.statusCode).toBe(200);
          }
        }),
      );
    } finally {
      await pool.close();
    }
    return ids;
  }

  it('a graceful stop (SIGTERM) after N requests leaves exactly N access-log lines', async () => {
    const app = spawn();
    const ids = await sendRequests(await app.listening(), REQUESTS, 'term');
    const exit = await app.stop('SIGTERM');
    expect(exit.code).toBe(0);
    const lines = jsonLines(exit.stdout);
    const access = lines.filter((line) => line.req !== undefined);
    expect(access).toHaveLength(REQUESTS);
    expect(access.map((line) => line.reqId).sort()).toEqual([...ids].sort());
    // The shutdown's own lines come after them, the last one included.
    expect(lines.at(-1)).toMatchObject({ msg: 'Shut down', context: 'Bootstrap' });
  });

  it('an uncaught error right after N requests exits 1 and leaves exactly N access-log lines', async () => {
    const app = spawn({}, true);
    const ids = await sendRequests(await app.listening(), REQUESTS, 'fatal');
    app.signal('SIGUSR2');
    const exit = await app.exited;
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain('uncaught error thrown by the test (SIGUSR2)');
    const access = accessLines(exit.stdout);
    expect(access).toHaveLength(REQUESTS);
    expect(new Set(access.map((line) => line.reqId))).toEqual(new Set(ids));
  });

  it('a refusal to start still prints the lines logged before it', async () => {
    blocker = createServer();
    const port = await new Promise<number>((resolve) =>
      blocker!.listen(0, '127.0.0.1', () => resolve((blocker!.address() as { port: number }).port)),
    );
    const exit = await spawn({ PORT: String(port) }).exited;
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/Leaf failed to start: \[EADDRINUSE\]/);
    const messages = jsonLines(exit.stdout).map((line) => String(line.msg));
    // Logged just before the refusal, after many lines: the last batch, not yet full.
    expect(messages).toContainEqual(expect.stringMatching(/^Segment on sqlite:/));
    expect(messages).toContainEqual(expect.stringMatching(/^Embedded configuration/));
    expect(messages).toContain('Nest application successfully started');
  });

  it('a quiet service writes a lone line within the flush interval, while it runs', async () => {
    const app = spawn();
    const port = await app.listening();
    await sendRequests(port, 1, 'quiet');
    const deadline = Date.now() + LOG_FLUSH_INTERVAL_MS + 2_000;
    while (accessLines(app.stdout).length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(app.alive).toBe(true);
    expect(accessLines(app.stdout)).toMatchObject([{ reqId: 'quiet-0' }]);
    expect((await app.stop('SIGTERM')).code).toBe(0);
  });
});
