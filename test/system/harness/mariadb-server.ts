/**
 * A private MariaDB server for system tests that stop, kill or pause the database: the
 * Debian package's `mariadbd`, initialised by `mariadb-install-db` in a temporary
 * directory, listening on a spare loopback port (root, empty password), with the database
 * `leaf` migrated as the application does and the allocation audit installed
 * (./allocation-audit.ts). The shared server on 3306 is never touched.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { sleep } from '../../support/id-load';
import { testDatabaseAt, type TestDatabase } from '../../support/test-database';
import { installAllocationAudit } from './allocation-audit';

const SERVER_BINARIES = ['/usr/sbin/mariadbd', '/usr/sbin/mysqld'];
const INSTALL_BINARIES = ['/usr/bin/mariadb-install-db', '/usr/bin/mysql_install_db'];

const run = promisify(execFile);

/**
 * The server's private temporary directory (created): every mariadbd of ours, the install's
 * bootstrap server too, deletes the `#sql*` files it finds in its tmpdir at start, which in a
 * shared /tmp are another running server's temporary tables.
 */
function privateTmpdir(dir: string): string {
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  return tmp;
}

/** True when the MariaDB server package is installed (`bash scripts/services.sh` installs it). */
export function mariaDbInstalled(): boolean {
  return SERVER_BINARIES.some(existsSync) && INSTALL_BINARIES.some(existsSync);
}

/** A free TCP port on 127.0.0.1 (released before it is returned; a race is unlikely). */
export function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Replication settings of a {@link MariaDbServer}: a binary log (row-based, so a replica's
 * triggers do not fire for replicated rows, docs/design.md "High-water mark"), a server ID
 * of its own and strict GTIDs. Left out, the server runs as before: no binary log.
 */
export interface ReplicationSettings {
  /** `server_id`, unique among the servers that replicate. */
  readonly serverId: number;
  /**
   * Start as an asynchronous GTID replica of this server (`MASTER_USE_GTID=slave_pos`,
   * `read_only` on) instead of creating `leaf`: the database, its migrations and the audit
   * arrive through replication.
   */
  readonly replicaOf?: MariaDbServer;
}

/** A private `mariadbd`; see the file. */
export class MariaDbServer {
  private process: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private log = '';
  /** The database `leaf` (migrated; audit installed) with the test helpers. */
  database!: TestDatabase;

  private constructor(
    /** The temporary directory: data, socket, pid file. */
    readonly dir: string,
    readonly port: number,
    private readonly replication: ReplicationSettings | null = null,
  ) {}

  /** `mysql://root@127.0.0.1:<port>/leaf`, the value for `LEAF_DB_URL`. */
  get url(): string {
    return `${this.serverUrl}/leaf`;
  }

  /** The server without a database. */
  get serverUrl(): string {
    return `mysql://root@127.0.0.1:${this.port}`;
  }

  /** True while the server process runs (also while paused). */
  get running(): boolean {
    return this.process !== null;
  }

  /**
   * Initialises a data directory, starts the server and creates `leaf` (with the
   * application's migrations and the allocation audit unless told otherwise).
   * @throws when the server does not accept connections within 60 s.
   */
  static async start(
    options: { migrate?: boolean; audit?: boolean; replication?: ReplicationSettings } = {},
  ): Promise<MariaDbServer> {
    const install = INSTALL_BINARIES.find(existsSync);
    if (!install) throw new Error('mariadb-install-db not found: install mariadb-server');
    const dir = mkdtempSync(join(tmpdir(), 'leaf-mariadb-'));
    const server = new MariaDbServer(dir, await sparePort(), options.replication ?? null);
    try {
      await run(
        install,
        [
          '--no-defaults',
          `--datadir=${join(dir, 'data')}`,
          `--tmpdir=${privateTmpdir(dir)}`,
          `--user=${process.getuid?.() === 0 ? 'root' : (process.env.USER ?? 'root')}`,
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
        ],
        { encoding: 'utf8', timeout: 120_000 },
      ).catch((error: { stderr?: string; stdout?: string; message: string }) => {
        throw new Error(
          `mariadb-install-db failed: ${error.stderr || error.stdout || error.message}`,
        );
      });
      await server.start();
      const primary = options.replication?.replicaOf;
      if (primary) {
        await server.replicate(primary);
        server.database = await testDatabaseAt(server.serverUrl, 'leaf');
        return server;
      }
      const admin = await createConnection(server.serverUrl);
      try {
        await admin.query('CREATE DATABASE leaf CHARACTER SET utf8mb4');
      } finally {
        await admin.end();
      }
      server.database = await testDatabaseAt(server.serverUrl, 'leaf', {
        migrate: options.migrate ?? true,
      });
      if ((options.migrate ?? true) && (options.audit ?? true)) {
        await installAllocationAudit(server.database);
      }
      return server;
    } catch (error) {
      await server.dispose();
      throw error;
    }
  }

  /**
   * Starts the server on the same data directory and port, and waits until it accepts
   * connections (after a kill, once InnoDB has recovered).
   * @throws when it does not within 60 s.
   */
  async start(): Promise<void> {
    if (this.process) throw new Error('the MariaDB server is already running');
    const binary = SERVER_BINARIES.find(existsSync)!;
    const child = spawn(
      binary,
      [
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        ...(process.getuid?.() === 0 ? ['--user=root'] : []),
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        `--socket=${join(this.dir, 'mysqld.sock')}`,
        `--pid-file=${join(this.dir, 'mysqld.pid')}`,
        `--tmpdir=${privateTmpdir(this.dir)}`,
        '--skip-name-resolve',
        ...this.binaryLogArguments(),
        '--innodb-buffer-pool-size=32M',
        '--max-connections=500',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
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
      if (this.process !== child) throw new Error(`mariadbd exited:\n${this.log.slice(-4000)}`);
      try {
        const connection = await createConnection({ uri: this.serverUrl, connectTimeout: 2_000 });
        await connection.end();
        return;
      } catch (error) {
        if (Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`mariadbd did not accept connections within 60 s: ${String(error)}`);
        }
        await sleep(200);
      }
    }
  }

  /** One statement as root on the server (no database); returns the rows. */
  async admin<T = Record<string, unknown>>(sql: string): Promise<T[]> {
    const connection = await createConnection(this.serverUrl);
    try {
      const [rows] = await connection.query(sql);
      return rows as T[];
    } finally {
      await connection.end();
    }
  }

  /**
   * Makes this server an asynchronous GTID replica of `primary`, from the start of the
   * primary's binary log, and waits until it has applied everything the primary logged.
   * @throws when it has not caught up within 60 s.
   */
  async replicate(primary: MariaDbServer): Promise<void> {
    await this.admin("SET GLOBAL gtid_slave_pos = ''");
    await this.admin(
      `CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = ${primary.port}, ` +
        "MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_CONNECT_RETRY = 1, " +
        'MASTER_USE_GTID = slave_pos',
    );
    await this.admin('SET GLOBAL read_only = ON');
    await this.admin('START SLAVE');
    const [{ pos }] = await primary.admin<{ pos: string }>('SELECT @@gtid_binlog_pos AS pos');
    const [{ waited }] = await this.admin<{ waited: number }>(
      `SELECT MASTER_GTID_WAIT('${pos}', 60) AS waited`,
    );
    if (Number(waited) !== 0) {
      throw new Error(`the replica did not catch up with ${pos} within 60 s`);
    }
  }

  /**
   * Promotes a replica as a failover does: replication stopped and forgotten (whatever it
   * received and had not applied is lost), `read_only` off.
   */
  async promote(): Promise<void> {
    await this.admin('STOP SLAVE');
    await this.admin('RESET SLAVE ALL');
    await this.admin('SET GLOBAL read_only = OFF');
  }

  /** Clean shutdown (SIGTERM) and wait until the process is gone. */
  async stop(): Promise<void> {
    await this.end('SIGTERM');
  }

  /** SIGKILL: a crash; InnoDB recovers at the next {@link start}. */
  async kill(): Promise<void> {
    await this.end('SIGKILL');
  }

  /** SIGSTOP: connections stay open, nothing answers. */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  /** SIGCONT. */
  resume(): void {
    this.process?.kill('SIGCONT');
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

  private binaryLogArguments(): string[] {
    const settings = this.replication;
    if (!settings) return ['--skip-log-bin'];
    return [
      `--server-id=${settings.serverId}`,
      `--log-bin=${join(this.dir, 'binlog')}`,
      '--binlog-format=ROW',
      '--log-slave-updates',
      '--gtid-strict-mode=ON',
      // A killed primary must not lose what it acknowledged (the replica may still lag).
      '--sync-binlog=1',
    ];
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    const child = this.process;
    if (!child) return;
    child.kill('SIGCONT'); // a paused server handles no signal but SIGKILL until continued
    child.kill(signal);
    // A clean shutdown that takes over a minute is killed.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
