/**
 * A private ZooKeeper for the system tests: Debian's ZooKeeper run by
 * `scripts/services.sh` on a spare loopback port with its own config, data and log
 * directory (`LEAF_ZK_PORT` / `LEAF_ZK_DIR`, tickTime 1000 ms, minSessionTimeout 2000 ms),
 * so a test can stop, kill and pause it without disturbing the shared server.
 *
 * ```ts
 * const zk = await ZooKeeperServer.start();
 * // LEAF_ZK_ADDRESS: zk.connectString
 * await zk.stop(); await zk.start(); zk.pause(); zk.resume(); await zk.kill(); await zk.wipe();
 * await zk.dispose();
 * ```
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ZooKeeper from 'zookeeper';
import { faketimeAvailable } from '../../support/faketime';
import { sleep } from '../../support/id-load';
import { describeWhen } from '../../support/services';

/** The part of the `zookeeper` package's handle used here (its own declarations are loose). */
interface NativeHandle {
  init(config: object): unknown;
  close(): unknown;
  once(event: 'connect' | 'close', listener: () => void): unknown;
  readonly client_id: string;
  readonly client_password: string;
}
const NativeZooKeeper = ZooKeeper as unknown as new (config: object) => NativeHandle;

const REPO = join(__dirname, '..', '..', '..');
const SERVICES_SCRIPT = join(REPO, 'scripts', 'services.sh');

/** What `scripts/services.sh zk-start` needs without installing anything: the jar and a JVM. */
export function zookeeperInstalled(): boolean {
  if (!existsSync('/usr/share/java/zookeeper.jar')) return false;
  const java = spawnSync(
    'sh',
    ['-c', 'test -x "$JAVA_HOME/bin/java" || command -v java || ls /usr/lib/jvm/*/bin/java'],
    { stdio: 'ignore' },
  );
  return java.status === 0;
}

/** The requirement named when {@link zookeeperInstalled} is false (for `describeWhen`). */
export const ZOOKEEPER_REQUIREMENT =
  'a local ZooKeeper that scripts/services.sh can start (/usr/share/java/zookeeper.jar and java; ' +
  'run `bash scripts/services.sh zk` once)';

/**
 * `describe(title, fn)` with a private {@link ZooKeeperServer} started before the block and
 * disposed after it; `fn` gets a getter for it. Without a local ZooKeeper installation (and,
 * with `faketime`, Debian's libfaketime) the block fails in CI and is skipped elsewhere
 * (`describeWhen`).
 */
export function describeWithZooKeeperServer(
  title: string,
  fn: (zk: () => ZooKeeperServer) => void,
  options: { faketime?: boolean } = {},
): void {
  const faketime = options.faketime ?? false;
  describeWhen(
    zookeeperInstalled() && (!faketime || faketimeAvailable()),
    faketime
      ? `${ZOOKEEPER_REQUIREMENT}, and libfaketime (\`bash scripts/services.sh faketime\`)`
      : ZOOKEEPER_REQUIREMENT,
    title,
    () => {
      let zk: ZooKeeperServer | undefined;
      beforeAll(async () => {
        zk = await ZooKeeperServer.start();
      }, 60_000);
      afterAll(async () => {
        await zk?.dispose();
      }, 30_000);
      fn(() => zk!);
    },
  );
}

/** A free TCP port on 127.0.0.1 (free when asked; the caller binds it soon after). */
export async function sparePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A private ZooKeeper server; see the top of this file. */
export class ZooKeeperServer {
  private paused = false;

  private constructor(
    /** Client port on 127.0.0.1. */
    readonly port: number,
    /** Config, data and logs of this server (deleted by {@link dispose}). */
    readonly dir: string,
  ) {}

  /** Starts a new server on a spare port with an empty data directory. */
  static async start(): Promise<ZooKeeperServer> {
    const server = new ZooKeeperServer(
      await sparePort(),
      mkdtempSync(join(tmpdir(), 'leaf-system-zk-')),
    );
    try {
      await server.start();
    } catch (error) {
      await server.dispose();
      throw error;
    }
    return server;
  }

  /** The connect string for `LEAF_ZK_ADDRESS`. */
  get connectString(): string {
    return `127.0.0.1:${this.port}`;
  }

  /**
   * Starts the server again on the same port and data (sessions and nodes survive a stop).
   * `zk-start` once more if it fails: right after forking the JVM the script can mistake the
   * not-yet-exec'd child for a dead server and give up; the second call finds the running
   * process and waits for it.
   */
  async start(): Promise<void> {
    try {
      await this.script('zk-start');
    } catch {
      await this.script('zk-start');
    }
  }

  /** Clean shutdown (SIGTERM), waiting until the port is closed. */
  async stop(): Promise<void> {
    this.resume();
    await this.script('zk-stop');
  }

  /** SIGKILL, waiting until the process is gone. */
  async kill(): Promise<void> {
    const pid = this.pid();
    if (pid === null) return;
    process.kill(pid, 'SIGKILL');
    this.paused = false;
    for (let i = 0; i < 100 && processExists(pid); i++) await sleep(100);
    if (processExists(pid)) throw new Error(`ZooKeeper pid ${pid} outlived SIGKILL for 10 s`);
  }

  /**
   * A ZooKeeper that lost its data: SIGKILL, its data directory emptied, started again on the
   * same port. Every session and node is gone, and the server's transaction IDs start over, so
   * it refuses clients that have seen later ones until they open a new session.
   */
  async wipe(): Promise<void> {
    await this.kill();
    rmSync(join(this.dir, 'data'), { recursive: true, force: true });
    await this.start();
  }

  /** SIGSTOP: the server keeps its sockets open and answers nothing. */
  pause(): void {
    const pid = this.pid();
    if (pid === null) throw new Error('ZooKeeper is not running');
    process.kill(pid, 'SIGSTOP');
    this.paused = true;
  }

  /** SIGCONT after {@link pause}. */
  resume(): void {
    const pid = this.pid();
    if (pid !== null && this.paused) process.kill(pid, 'SIGCONT');
    this.paused = false;
  }

  /** Stops the server (SIGKILL if a clean stop fails) and deletes its directory. */
  async dispose(): Promise<void> {
    try {
      await this.stop();
    } catch {
      await this.kill();
    }
    rmSync(this.dir, { recursive: true, force: true });
    rmSync(join(tmpdir(), `leaf-services-${this.port}.lock`), { force: true });
  }

  /**
   * Forces the expiry of another client's session, as the server would after its timeout:
   * attaches a second connection to the same session and closes it, which ends the session
   * on the server; the owner learns `SESSION_EXPIRED` on its next contact.
   *
   * The owner's password is not needed from it: ZooKeeper derives a session's password from
   * its ID (`java.util.Random(id ^ 0xB3415C00)`, 16 bytes), so it is computed here (as Curator's
   * `KillSession` does with a password it is given). The owner may win the session back
   * between the attach and the close (it reconnects at once when the server moves its session
   * away), so this attaches again until the server answers that the session is gone: at most
   * 10 rounds, else it throws.
   * @param sessionId the session ID in hex, as clients log it (`0x…` or bare).
   */
  async expireSession(sessionId: string): Promise<void> {
    const id = BigInt(`0x${sessionId.replace(/^0x/i, '')}`);
    for (let round = 0; round < 10; round++) {
      if (!(await this.attachAndClose(id))) return;
      await sleep(100);
    }
    throw new Error(`session 0x${id.toString(16)} still alive after 10 rounds of closing it`);
  }

  /** Attaches to session `id` and closes it; false when the server says it is already gone. */
  private async attachAndClose(id: bigint): Promise<boolean> {
    const client = new NativeZooKeeper({
      connect: this.connectString,
      timeout: 4000,
      debug_level: 0,
      client_id: id.toString(16),
      client_password: sessionPassword(id),
    });
    try {
      return await withTimeout(
        new Promise<boolean>((resolve) => {
          client.once('connect', () => resolve(true));
          client.once('close', () => resolve(false));
          client.init({});
        }),
        10_000,
        `attaching to session 0x${id.toString(16)}`,
      );
    } finally {
      client.close();
    }
  }

  private pid(): number | null {
    try {
      const pid = Number(readFileSync(join(this.dir, 'zookeeper.pid'), 'utf8').trim());
      return Number.isInteger(pid) && pid > 0 && processExists(pid) ? pid : null;
    } catch {
      return null;
    }
  }

  private script(command: 'zk-start' | 'zk-stop'): Promise<void> {
    return new Promise((resolve, reject) => {
      execFile(
        'bash',
        [SERVICES_SCRIPT, command],
        {
          env: {
            ...process.env,
            LEAF_ZK_PORT: String(this.port),
            LEAF_ZK_DIR: this.dir,
            LEAF_WAIT_SECS: '30',
          },
          timeout: 45_000,
        },
        (error, stdout, stderr) =>
          error
            ? reject(
                new Error(`services.sh ${command} failed: ${error.message}\n${stdout}${stderr}`),
              )
            : resolve(),
      );
    });
  }
}

/**
 * The password ZooKeeper gives session `id`: 16 bytes of `java.util.Random` seeded with
 * `id ^ 0xB3415C00`, as 32 hex digits. Java's generator: a 48-bit linear congruential
 * state, each `nextInt()` its top 32 bits, `nextBytes` taking them low byte first. Upper-case, as the `zookeeper` package wants it.
 */
export function sessionPassword(id: bigint): string {
  const MASK = (1n << 48n) - 1n;
  const MULTIPLIER = 0x5deece66dn;
  let seed = (BigInt.asIntN(64, id) ^ 0xb3415c00n ^ MULTIPLIER) & MASK;
  const bytes: number[] = [];
  while (bytes.length < 16) {
    seed = (seed * MULTIPLIER + 0xbn) & MASK;
    let word = Number(seed >> 16n); // 32 bits
    for (let n = 0; n < 4 && bytes.length < 16; n++) {
      bytes.push(word & 0xff);
      word >>>= 8;
    }
  }
  // The `zookeeper` package parses upper-case hex digits only.
  return Buffer.from(bytes).toString('hex').toUpperCase();
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
