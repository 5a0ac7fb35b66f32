/**
 * Guards for e2e specs that need the real services.
 *
 * ```ts
 * import { describeWithServices, zookeeperConnectString } from './support/services';
 *
 * describeWithServices(['zookeeper', 'mysql'], 'snowflake over HTTP', () => {
 *   // ordinary beforeAll/it/afterAll
 * });
 * ```
 *
 * While Jest collects the spec, each service is probed once per test file (synchronously, in
 * a child process: a service that is down refuses at once; one that does not answer is given
 * up on after 5 s, and the child after 15 s, which a loaded machine running suites in
 * parallel may need just to start Node):
 * - ZooKeeper at `LEAF_ZK_ADDRESS` (default `127.0.0.1:2181`; the first host of the list):
 *   the `srvr` four-letter word must come back from a server that is serving requests.
 * - MySQL/MariaDB at `LEAF_TEST_MYSQL_URL` (default `mysql://root@127.0.0.1:3306/leaf`): a TCP
 *   connection must receive the server's greeting.
 * - PostgreSQL at `LEAF_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`):
 *   the server must answer an SSL request (one byte, `S` or `N`).
 *
 * Then:
 * - every service answers: the block is an ordinary `describe`;
 * - one does not and `CI` is set (to anything but `''`, `0`, `false`): the block becomes a
 *   single failing test naming the service, its address and how to start it. There is
 *   deliberately no switch to skip in CI;
 * - one does not, outside CI: the block is skipped (`describe.skip`, so Jest counts the tests
 *   as skipped, not passed) and a warning says what is missing.
 *
 * Start the services with `bash scripts/services.sh`.
 */
import { execFile, spawnSync } from 'node:child_process';

/** A service e2e specs can require. */
export type TestService = 'zookeeper' | 'mysql' | 'postgres';

const DEFAULT_ZOOKEEPER = '127.0.0.1:2181';
const DEFAULT_MYSQL_URL = 'mysql://root@127.0.0.1:3306/leaf';
/** The PostgreSQL server the e2e specs use (`LEAF_TEST_POSTGRES_URL`); its database is the admin one. */
export const POSTGRES_TEST_URL =
  process.env.LEAF_TEST_POSTGRES_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test';
/** How long the probe waits for the service's answer. */
const PROBE_TIMEOUT_MS = 5_000;
/** How long the probe's child process may take in all (starting Node included). */
const PROBE_PROCESS_TIMEOUT_MS = 15_000;

/** The ZooKeeper connect string specs should use (`LEAF_ZK_ADDRESS`, default `127.0.0.1:2181`). */
export function zookeeperConnectString(): string {
  return process.env.LEAF_ZK_ADDRESS?.trim() || DEFAULT_ZOOKEEPER;
}

/** Host and port of the first server in {@link zookeeperConnectString}. */
export function zookeeperEndpoint(): { host: string; port: number } {
  const first = zookeeperConnectString().split('/')[0].split(',')[0].trim();
  const colon = first.lastIndexOf(':');
  if (colon < 0) return { host: first, port: 2181 };
  return { host: first.slice(0, colon), port: Number(first.slice(colon + 1)) || 2181 };
}

/** True when running in CI (`CI` set to anything but `''`, `0` or `false`). */
export function isCi(): boolean {
  const value = (process.env.CI ?? '').trim().toLowerCase();
  return value !== '' && value !== '0' && value !== 'false';
}

/** Probes `service` now (no cache); resolves `true` when it answers. Never rejects. */
export function serviceAvailable(service: TestService): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(process.execPath, probeArgs(service), { timeout: PROBE_PROCESS_TIMEOUT_MS }, (error) =>
      resolve(!error),
    );
  });
}

/**
 * `describe(title, fn)` when every service in `services` answers; otherwise a failing test in
 * CI, or a skipped block with a warning elsewhere (see the top of this file).
 */
export function describeWithServices(
  services: readonly TestService[],
  title: string,
  fn: () => void,
): void {
  const missing = services.filter((service) => !probeOnce(service));
  describeWhen(missing.length === 0, missing.map(explain).join('; '), title, fn);
}

/**
 * The general form of {@link describeWithServices}, for other prerequisites of a block
 * (e.g. a local ZooKeeper installation a spec starts itself): runs `fn` when `available`;
 * otherwise fails in CI, or skips with a warning naming `requirement`.
 */
export function describeWhen(
  available: boolean,
  requirement: string,
  title: string,
  fn: () => void,
): void {
  if (available) {
    describe(title, fn);
  } else if (isCi()) {
    describe(title, () => {
      it('has its prerequisites (CI never skips)', () => {
        throw new Error(`Missing in CI: ${requirement}`);
      });
    });
  } else {
    console.warn(`[e2e] SKIPPING "${title}": ${requirement}. In CI (CI=true) this fails instead.`);
    describe.skip(title, fn);
  }
}

const probed = new Map<TestService, boolean>();

function probeOnce(service: TestService): boolean {
  let available = probed.get(service);
  if (available === undefined) {
    const result = spawnSync(process.execPath, probeArgs(service), {
      timeout: PROBE_PROCESS_TIMEOUT_MS,
      stdio: 'ignore',
    });
    available = result.status === 0;
    probed.set(service, available);
  }
  return available;
}

function explain(service: TestService): string {
  if (service === 'zookeeper') {
    const { host, port } = zookeeperEndpoint();
    return (
      `ZooKeeper does not answer at ${host}:${port} (LEAF_ZK_ADDRESS); ` +
      'start it with `bash scripts/services.sh zk`'
    );
  }
  if (service === 'postgres') {
    const { host, port } = postgresEndpoint();
    return (
      `PostgreSQL does not answer at ${host}:${port} (LEAF_TEST_POSTGRES_URL); ` +
      'start it with `bash scripts/services.sh pg`'
    );
  }
  const { host, port } = mysqlEndpoint();
  return (
    `MySQL does not answer at ${host}:${port} (LEAF_TEST_MYSQL_URL); ` +
    'start it with `bash scripts/services.sh mysql`'
  );
}

function mysqlEndpoint(): { host: string; port: number } {
  const url = new URL(process.env.LEAF_TEST_MYSQL_URL?.trim() || DEFAULT_MYSQL_URL);
  return { host: url.hostname, port: Number(url.port) || 3306 };
}

function postgresEndpoint(): { host: string; port: number } {
  const url = new URL(POSTGRES_TEST_URL);
  return { host: url.hostname, port: Number(url.port) || 5432 };
}

/**
 * Runs in a child process so the synchronous guard can wait for a socket without blocking
 * Jest's event loop on anything but the child. Exit code 0 = available.
 */
const PROBE_SCRIPT = `
const net = require('node:net');
const [kind, host, port, timeout] = process.argv.slice(1);
let reply = '';
const finish = (ok) => process.exit(ok ? 0 : 1);
const socket = net.connect({ host, port: Number(port) });
socket.setTimeout(Number(timeout), () => finish(false));
socket.on('error', () => finish(false));
// PostgreSQL speaks second: an SSLRequest (length 8, code 80877103) is answered with S or N.
socket.on('connect', () => {
  if (kind === 'zookeeper') socket.write('srvr');
  if (kind === 'postgres') socket.write(Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]));
});
socket.on('data', (chunk) => {
  reply += chunk;
  if (kind === 'mysql') finish(true);
  if (kind === 'postgres') finish(reply[0] === 'S' || reply[0] === 'N');
});
socket.on('end', () => finish(kind === 'zookeeper' && reply.includes('Zookeeper version')));
`;

function probeArgs(service: TestService): string[] {
  const { host, port } =
    service === 'zookeeper'
      ? zookeeperEndpoint()
      : service === 'postgres'
        ? postgresEndpoint()
        : mysqlEndpoint();
  return ['-e', PROBE_SCRIPT, service, host, String(port), String(PROBE_TIMEOUT_MS)];
}
