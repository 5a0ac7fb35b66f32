import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';

/** A benchmark server in its own process (see bench-server.ts). */
export interface BenchServer {
  readonly port: number;
  stop(): Promise<void>;
}

/** Starts `bench-server.ts` in `mode` and resolves once it listens. */
export function startServer(mode: 'leaf' | 'baseline'): Promise<BenchServer> {
  const root = join(__dirname, '..', '..');
  const child: ChildProcess = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', join(__dirname, 'bench-server.ts'), mode],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true' } },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`bench server (${mode}) exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /READY (\d+)/.exec(out);
      if (!match) return;
      child.removeAllListeners('exit');
      resolve({
        port: Number(match[1]),
        stop: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/** Result of one load run. */
export interface LoadResult {
  readonly requestsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  readonly non2xx: number;
}

/**
 * Runs autocannon against `url`. Without `rate` it is a throughput run (as fast as
 * `connections` allow); with `rate` it sends that many requests per second in total.
 */
export async function load(
  url: string,
  options: { durationSec: number; connections: number; rate?: number; pipelining?: number },
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    duration: options.durationSec,
    connections: options.connections,
    pipelining: options.pipelining ?? 1,
    overallRate: options.rate,
  });
  return {
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}
