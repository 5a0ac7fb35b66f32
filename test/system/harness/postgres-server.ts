/**
 * A private PostgreSQL server for system tests that stop, kill, pause or restart the
 * database: the Debian package's `initdb` and `postgres`, run as the `postgres` system user
 * (PostgreSQL refuses root) in a temporary directory, listening on a spare loopback port with
 * trust authentication, with the database `leaf` migrated as the application does. A fault
 * reaches the postmaster and every backend: `kill -9` is a crash (recovered from the WAL at
 * the next start), SIGSTOP a server that holds its connections open and answers nothing. The shared server on 5432 is never touched.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { sleep } from '../../support/id-load';
import {
  createPostgresTestDatabase,
  type PostgresTestDatabase,
} from '../../support/postgres-database';
import { sparePort } from './mariadb-server';

const run = promisify(execFile);

/** `/usr/lib/postgresql/<newest>/bin`, or null when the server package is not installed. */
function binaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0]!, 'bin') : null;
}

/** True when the PostgreSQL server package is installed. */
export function postgresInstalled(): boolean {
  return binaries() !== null;
}

/** The `postgres` system user's uid and gid. */
function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
  return { uid: id('-u'), gid: id('-g') };
}

/** Runs a PostgreSQL binary as `postgres` (setpriv execs it: no process in between). */
function asPostgres(binary: string, args: string[]): [string, string[]] {
  return ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', binary, ...args]];
}

/** A private `postgres`; see the file. */
export class PostgresServer {
  private process: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private log = '';
  /** The database `leaf` (migrated) with the test helpers. */
  database!: PostgresTestDatabase;

  private constructor(
    /** The temporary directory: data and socket. */
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    /** Extra environment of the server (e.g. a faked clock: `FaketimeClock.env()`). */
    private readonly env: Record<string, string> = {},
  ) {}

  /** `postgres://postgres@127.0.0.1:<port>/leaf`, the value for `LEAF_DB_URL`. */
  get url(): string {
    return this.database.url;
  }

  /** The server's admin database. */
  get serverUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** True while the server process runs (also while paused). */
  get running(): boolean {
    return this.process !== null;
  }

  /**
   * Initialises a data directory, starts the server and creates `leaf` (with the
   * application's migrations unless told otherwise); `env` is added to the server's
   * environment at every start (e.g. `FaketimeClock.env()`: files it names must be readable by
   * the `postgres` user).
   * @throws when the server does not accept connections within 60 s.
   */
  static async start(
    options: { migrate?: boolean; env?: Record<string, string> } = {},
  ): Promise<PostgresServer> {
    const bin = binaries();
    if (!bin) throw new Error('PostgreSQL server binaries not found: install postgresql');
    const dir = mkdtempSync(join(tmpdir(), 'leaf-postgres-'));
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
    const server = new PostgresServer(dir, await sparePort(), bin, options.env);
    try {
      const [command, args] = asPostgres(join(bin, 'initdb'), [
        '-D',
        join(dir, 'data'),
        '-U',
        'postgres',
        '--auth=trust',
        '--no-sync',
        '-E',
        'UTF8',
      ]);
      await run(command, args, { encoding: 'utf8', timeout: 120_000, cwd: dir }).catch(
        (error: { stderr?: string; stdout?: string; message: string }) => {
          throw new Error(`initdb failed: ${error.stderr || error.stdout || error.message}`);
        },
      );
      await server.start();
      server.database = await createPostgresTestDatabase({
        serverUrl: server.serverUrl,
        name: 'leaf',
        migrate: options.migrate ?? true,
      });
      return server;
    } catch (error) {
      await server.dispose();
      throw error;
    }
  }

  /**
   * Starts the server on the same data directory and port, and waits until it accepts
   * connections (after a kill, once it has replayed its WAL).
   * @throws when it does not within 60 s.
   */
  async start(): Promise<void> {
    if (this.process) throw new Error('the PostgreSQL server is already running');
    const serverArgs = [
      '-D',
      join(this.dir, 'data'),
      '-p',
      String(this.port),
      '-h',
      '127.0.0.1',
      '-k',
      this.dir,
      '-c',
      'max_connections=300',
      '-c',
      'shared_buffers=32MB',
      '-c',
      'fsync=off',
    ];
    // The extra environment is set by `env` after setpriv: a preloaded library (libfaketime)
    // then starts in the postgres user's process, not in root's setpriv (libfaketime's shared
    // memory, made by root, would be closed to the postgres user).
    const assignments = Object.entries(this.env).map(([name, value]) => `${name}=${value}`);
    const [command, args] =
      assignments.length === 0
        ? asPostgres(join(this.bin, 'postgres'), serverArgs)
        : asPostgres('/usr/bin/env', [...assignments, join(this.bin, 'postgres'), ...serverArgs]);
    // Detached: a test runner's Ctrl-C does not reach it; the test ends it.
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      cwd: this.dir,
    });
    this.process = child;
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.log += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.log += chunk));
    this.exited = new Promise((resolve) =>
      child.once('close', () => {
        if (this.process === child) this.process = null;
        resolve();
      }),
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (this.process !== child) throw new Error(`postgres exited:\n${this.log.slice(-4000)}`);
      const client = new Client({
        connectionString: this.serverUrl,
        connectionTimeoutMillis: 2000,
      });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch (error) {
        if (Date.now() > deadline) {
          this.signalGroup('SIGKILL');
          throw new Error(`postgres did not accept connections within 60 s: ${String(error)}`);
        }
        await sleep(200);
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  }

  /** Clean shutdown (SIGINT: fast shutdown) and wait until every process is gone. */
  async stop(): Promise<void> {
    await this.end('SIGINT');
  }

  /** SIGKILL to the server and its backends: a crash; the WAL is replayed at {@link start}. */
  async kill(): Promise<void> {
    await this.end('SIGKILL');
  }

  /** SIGSTOP to every process of the server: connections stay open, nothing answers. */
  pause(): void {
    this.signalGroup('SIGSTOP');
  }

  /** SIGCONT. */
  resume(): void {
    this.signalGroup('SIGCONT');
  }

  /** Kills the server (if running) and deletes its directory. Safe to call twice. */
  async dispose(): Promise<void> {
    await this.end('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The server's own output so far (for a failing test's message). */
  get output(): string {
    return this.log;
  }

  /**
   * Signals the postmaster and every process it started: each backend makes itself a process
   * group leader (so its postmaster can signal it), so the group alone is not enough.
   */
  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.process?.pid;
    if (pid === undefined) return;
    for (const target of [pid, ...childrenOf(pid)]) {
      try {
        process.kill(target, signal);
      } catch {
        // Gone already.
      }
    }
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    const child = this.process;
    if (!child) return;
    const children = childrenOf(child.pid!);
    this.signalGroup('SIGCONT'); // a paused server handles no signal but SIGKILL until continued
    this.signalGroup(signal);
    const timer = setTimeout(() => this.signalGroup('SIGKILL'), 60_000);
    try {
      await this.exited;
      // Backends end with their postmaster; a restart waits for their shared memory.
      if (signal === 'SIGKILL') await groupGone(children);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return children;
}

/** Resolves once the backends of the killed postmaster `pid` are gone too (at most 5 s). */
async function groupGone(children: number[]): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const alive = children.filter((child) => {
      try {
        process.kill(child, 0);
        return true;
      } catch {
        return false;
      }
    });
    if (alive.length === 0) return;
    for (const child of alive) process.kill(child, 'SIGKILL');
    await sleep(50);
  }
}
