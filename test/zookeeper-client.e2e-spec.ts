/**
 * ZookeeperClient against a real ZooKeeper (LEAF_ZK_ADDRESS, default 127.0.0.1:2181).
 *
 * Connection trouble is produced without touching the shared server, which other specs use
 * at the same time:
 * - the client talks through a TCP proxy owned by the test; dropping its connections is a
 *   connection loss, and refusing connections for longer than the session can live makes the
 *   server expire the session (see `blackOutUntilExpired`);
 * - the restart test runs a private ZooKeeper (`ZooKeeperServer` of the system tests'
 *   harness) and restarts that one.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ZkClient, ZkConnectionState } from '@app/leaf/core/zookeeper/zk-client.port';
import {
  ZookeeperClient,
  ZookeeperClientOptions,
} from '@app/leaf/adapters/zookeeper/zookeeper.client';
import {
  describeWithServices,
  zookeeperConnectString,
  zookeeperEndpoint,
} from './support/services';
import { TcpProxy } from './support/tcp-proxy';
import { deleteTree } from './support/zookeeper';
import { zkCodeOf as codeOf } from '@app/leaf/testing/zk-test-helpers';
import { describeWithZooKeeperServer } from './system/harness/zookeeper-server';

const REPO = join(__dirname, '..');

/** Records a client's state changes and waits for a condition on them (listener-driven). */
class StateRecorder {
  readonly states: ZkConnectionState[] = [];
  private readonly waiters = new Set<() => void>();

  constructor(client: ZkClient) {
    client.onStateChange((state) => {
      this.states.push(state);
      for (const waiter of [...this.waiters]) waiter();
    });
  }

  until(
    what: string,
    condition: (states: ZkConnectionState[]) => boolean,
    timeoutMs: number,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!condition(this.states)) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`no "${what}" within ${timeoutMs} ms; states: ${this.states.join(', ')}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }
}

describeWithServices(['zookeeper'], 'ZookeeperClient (real ZooKeeper)', () => {
  const clients: ZookeeperClient[] = [];
  const logs: string[] = [];
  const root = `/leaf-e2e-zk-${randomUUID()}`;
  let proxy: TcpProxy;

  function newClient(options: Partial<ZookeeperClientOptions> = {}): ZookeeperClient {
    const client = new ZookeeperClient({
      connect: zookeeperConnectString(),
      sessionTimeoutMs: 10_000,
      logger: (message) => logs.push(message),
      ...options,
    });
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    proxy = new TcpProxy(zookeeperEndpoint());
    await proxy.start();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    logs.length = 0;
  });

  afterAll(async () => {
    await proxy.stop();
    const cleaner = newClient();
    await cleaner.connect(5_000);
    await deleteTree(cleaner, root);
    await cleaner.close();
  });

  it('creates paths and sequential nodes, lists, reads and writes with versions, deletes', async () => {
    const client = newClient();
    await client.connect(5_000);
    expect(client.connected).toBe(true);

    const parent = `${root}/crud/forever`;
    await client.mkdirp(parent);
    await client.mkdirp(parent); // existing nodes are fine
    const first = await client.createPersistentSequential(
      `${parent}/10.0.0.1:8080-`,
      Buffer.from('{"a":1}'),
    );
    const second = await client.createPersistentSequential(
      `${parent}/10.0.0.2:8080-`,
      Buffer.alloc(0),
    );
    expect(first).toBe(`${parent}/10.0.0.1:8080-0000000000`);
    expect(second).toBe(`${parent}/10.0.0.2:8080-0000000001`);
    expect((await client.getChildren(parent)).sort()).toEqual([
      '10.0.0.1:8080-0000000000',
      '10.0.0.2:8080-0000000001',
    ]);

    expect(await client.getData(first)).toEqual({ data: Buffer.from('{"a":1}'), version: 0 });
    expect(await client.getData(second)).toEqual({ data: Buffer.alloc(0), version: 0 });
    await client.setData(first, Buffer.from('v1'), 0);
    await client.setData(first, Buffer.from('v2'));
    expect(await client.getData(first)).toEqual({ data: Buffer.from('v2'), version: 2 });

    expect(await codeOf(client.setData(first, Buffer.from('stale'), 1))).toBe('BAD_VERSION');
    expect(await codeOf(client.delete(first, 1))).toBe('BAD_VERSION');
    await client.delete(first, 2);
    await client.delete(second);
    expect(await client.getChildren(parent)).toEqual([]);
    // Deleting does not give numbers back: the parent counts every child it ever had.
    expect(await client.createPersistentSequential(`${parent}/n-`, Buffer.alloc(0))).toBe(
      `${parent}/n-0000000002`,
    );
  });

  it('creates ephemeral nodes that end with the session', async () => {
    const owner = newClient();
    const other = newClient();
    await Promise.all([owner.connect(5_000), other.connect(5_000)]);
    const parent = `${root}/ephemeral/alive`;
    const path = `${parent}/7`;
    expect(await codeOf(owner.createEphemeral(path, Buffer.from('x')))).toBe('NO_NODE');
    await owner.mkdirp(parent);
    await owner.createEphemeral(path, Buffer.from('owner'));
    expect(await codeOf(other.createEphemeral(path, Buffer.from('other')))).toBe('NODE_EXISTS');
    expect(await other.getData(path)).toEqual({ data: Buffer.from('owner'), version: 0 });

    await owner.close(); // ends the session: ZooKeeper deletes its ephemeral nodes at once
    expect(await codeOf(other.getData(path))).toBe('NO_NODE');
    await other.createEphemeral(path, Buffer.from('other'));
    expect(await other.getChildren(parent)).toEqual(['7']);
  });

  it('maps ZooKeeper errors to ZkError codes', async () => {
    const client = newClient();
    await client.connect(5_000);
    const missing = `${root}/missing`;

    expect(await codeOf(client.getData(missing))).toBe('NO_NODE');
    expect(await codeOf(client.getChildren(missing))).toBe('NO_NODE');
    expect(await codeOf(client.setData(missing, Buffer.alloc(0)))).toBe('NO_NODE');
    expect(await codeOf(client.delete(missing))).toBe('NO_NODE');
    expect(await codeOf(client.createPersistentSequential(`${missing}/n-`, Buffer.alloc(0)))).toBe(
      'NO_NODE',
    );
    expect(await codeOf(client.mkdirp('relative/path'))).toBe('OTHER');
  });

  it('rejects with CLOSED after close(), which may be called twice', async () => {
    const client = newClient();
    await client.connect(5_000);
    await client.close();
    await client.close();

    expect(client.connected).toBe(false);
    expect(await codeOf(client.connect(1_000))).toBe('CLOSED');
    expect(await codeOf(client.getChildren('/'))).toBe('CLOSED');
  });

  it('rejects connect with TIMEOUT quickly when nothing listens, then closes cleanly', async () => {
    const client = newClient({ connect: '127.0.0.1:1' });
    const started = Date.now();

    expect(await codeOf(client.connect(300))).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(1_500);
    await client.close();
    expect(await codeOf(client.getChildren('/'))).toBe('CLOSED');
  });

  it('leaves nothing that keeps a process alive after close()', async () => {
    // Only a separate process shows whether the native handles let the event loop end.
    const script = `
      const { ZookeeperClient } = require(${JSON.stringify(join(REPO, 'libs/leaf/src/adapters/zookeeper/zookeeper.client.ts'))});
      const codeOf = (p) => p.then(() => 'ok', (e) => e.zkCode || String(e));
      const make = (connect) => new ZookeeperClient({ connect, sessionTimeoutMs: 10000 });
      (async () => {
        const r = {};
        let c = make('127.0.0.1:1');
        r.closedPort = await codeOf(c.connect(200));
        await c.close();
        c = make(''); // zookeeper_init fails: the client retries on a timer
        r.initFailure = await codeOf(c.connect(200));
        await c.close();
        c = make(${JSON.stringify(zookeeperConnectString())});
        r.connected = await codeOf(c.connect(5000).then(() => c.getChildren('/')));
        await c.close();
        c = make(${JSON.stringify(zookeeperConnectString())});
        const pending = codeOf(c.connect(5000));
        await c.close();
        r.closedWhileConnecting = await pending;
        console.log('\\nRESULT ' + JSON.stringify(r));
      })();
    `;
    const result = await new Promise<{
      code: number | null;
      signal: string | null;
      stdout: string;
    }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', '-e', script],
        { cwd: REPO, timeout: 20_000 },
        (_error, stdout) => resolve({ code: child.exitCode, signal: child.signalCode, stdout }),
      );
    });

    expect({ code: result.code, signal: result.signal }).toEqual({ code: 0, signal: null });
    // The native addon prints some errors to stdout without a newline: find our line.
    expect(JSON.parse(/^RESULT (.*)$/m.exec(result.stdout)?.[1] ?? '{}')).toEqual({
      closedPort: 'TIMEOUT',
      initFailure: 'TIMEOUT',
      connected: 'ok',
      closedWhileConnecting: 'CLOSED',
    });
  }, 30_000);

  it('reports disconnected and connected when the connection drops but the session lives', async () => {
    const client = newClient({ connect: `127.0.0.1:${proxy.port}` });
    const recorder = new StateRecorder(client);
    client.onStateChange(() => {
      throw new Error('a faulty listener');
    });
    await client.connect(5_000);
    await client.mkdirp(`${root}/drop`);

    proxy.dropConnections();
    await recorder.until('reconnect', (states) => states.length >= 3, 10_000);

    expect(recorder.states).toEqual(['connected', 'disconnected', 'connected']);
    expect(client.connected).toBe(true);
    expect((await client.getData(`${root}/drop`)).version).toBe(0);
    expect(logs.some((line) => line.includes('listener threw'))).toBe(true);
  });

  it('fails calls with CONNECTION_LOSS while disconnected, and close() stops the reconnecting', async () => {
    const client = newClient({ connect: `127.0.0.1:${proxy.port}` });
    const recorder = new StateRecorder(client);
    await client.connect(5_000);

    proxy.refuse(true);
    try {
      await recorder.until('disconnected', (states) => states.includes('disconnected'), 10_000);
      expect(await codeOf(client.getChildren('/'))).toBe('CONNECTION_LOSS');
      await client.close();
    } finally {
      proxy.refuse(false);
    }
    expect(client.connected).toBe(false);
    expect(await codeOf(client.getChildren('/'))).toBe('CLOSED');
  });

  it('opens a new session after the server expired the old one', async () => {
    const client = newClient({ connect: `127.0.0.1:${proxy.port}`, sessionTimeoutMs: 2_000 });
    const recorder = new StateRecorder(client);
    await client.connect(5_000);
    const negotiated = Number(/timeout (\d+) ms/.exec(logs.join('\n'))?.[1]);
    expect(negotiated).toBeGreaterThan(0);
    await client.mkdirp(`${root}/expiry`);

    // The server expires a session it has not heard from for `timeout` rounded up to the next
    // tick, i.e. within timeout + tickTime; and tickTime <= timeout / 2 because the minimum
    // session timeout is 2 ticks. So refusing the client for 1.5 × timeout (+ slack) makes
    // the expiry certain, whatever the server's tickTime.
    proxy.refuse(true);
    try {
      await sleep(negotiated * 1.5 + 750);
    } finally {
      proxy.refuse(false);
    }
    await recorder.until(
      'expired, then connected',
      (states) => states.includes('expired') && states.at(-1) === 'connected',
      20_000,
    );

    expect(recorder.states).toEqual(['connected', 'disconnected', 'expired', 'connected']);
    expect(client.connected).toBe(true);
    expect((await client.getData(`${root}/expiry`)).version).toBe(0);
    await client.setData(`${root}/expiry`, Buffer.from('new session'), 0);
  }, 30_000);
});

describeWithZooKeeperServer(
  'ZookeeperClient across a ZooKeeper restart (private instance)',
  (server) => {
    it('is connected again after zk-stop and zk-start, with its data', async () => {
      const zk = server();
      const client = new ZookeeperClient({
        connect: zk.connectString,
        sessionTimeoutMs: 10_000,
      });
      try {
        await client.connect(5_000);
        await client.mkdirp('/leaf/restart');
        const node = await client.createPersistentSequential(
          '/leaf/restart/n-',
          Buffer.from('before'),
        );
        const recorder = new StateRecorder(client);

        await zk.stop();
        await recorder.until('disconnected', (states) => states.includes('disconnected'), 10_000);
        expect(await codeOf(client.getData(node))).toBe('CONNECTION_LOSS');

        await zk.start();
        await recorder.until('connected', (states) => states.at(-1) === 'connected', 20_000);
        expect(client.connected).toBe(true);
        expect(await client.getData(node)).toEqual({ data: Buffer.from('before'), version: 0 });
        await client.setData(node, Buffer.from('after'), 0);
      } finally {
        await client.close();
      }
    }, 60_000);

    it('after ZooKeeper lost its data (it refuses the old session forever) opens a new session within seconds', async () => {
      const logs: string[] = [];
      const zk = server();
      const client = new ZookeeperClient({
        connect: zk.connectString,
        sessionTimeoutMs: 20_000,
        logger: (line) => logs.push(line),
      });
      try {
        await client.connect(5_000);
        // Transactions the wiped server will not have seen: it refuses this session's reconnects.
        await client.mkdirp('/leaf/wipe');
        for (let i = 0; i < 20; i++) {
          await client.createPersistentSequential('/leaf/wipe/n-', Buffer.from('x'));
        }
        const recorder = new StateRecorder(client);
        await zk.wipe();
        const back = Date.now();
        await recorder.until('expired', (states) => states.includes('expired'), 15_000);
        await recorder.until('connected', (states) => states.at(-1) === 'connected', 15_000);
        // Found by throwaway sessions (two checks 3 s apart; more on a loaded machine), well
        // before the 20 s session timeout, which the log line below tells apart.
        expect(Date.now() - back).toBeLessThan(15_000);
        expect(recorder.states).toEqual(['disconnected', 'expired', 'connected']);
        expect(logs.join('\n')).toContain('the server answers new sessions but not this one');
        expect(await codeOf(client.getData('/leaf/wipe'))).toBe('NO_NODE');
      } finally {
        await client.close();
      }
    }, 60_000);

    it('loses its session to ZooKeeperServer.expireSession (a second connection on the same session, closed) and opens a new one', async () => {
      const logs: string[] = [];
      const zk = server();
      const client = new ZookeeperClient({
        connect: zk.connectString,
        sessionTimeoutMs: 10_000,
        logger: (line) => logs.push(line),
      });
      try {
        await client.connect(5_000);
        const session = /session (0x[0-9a-f]+)/.exec(logs.join('\n'))![1]!;
        const ephemeral = `/leaf-expire-${randomUUID()}`;
        await client.createEphemeral(ephemeral, Buffer.from('x'));
        const recorder = new StateRecorder(client);

        await zk.expireSession(session);
        await recorder.until('expired', (states) => states.includes('expired'), 15_000);
        await recorder.until('connected', (states) => states.at(-1) === 'connected', 15_000);
        expect(await codeOf(client.getData(ephemeral))).toBe('NO_NODE');
        const renewed = [...logs.join('\n').matchAll(/session (0x[0-9a-f]+)/g)].at(-1)![1];
        expect(renewed).not.toBe(session);
      } finally {
        await client.close();
      }
    }, 60_000);
  },
);
