import type { ZkConnectionState } from '../core/zookeeper/zk-client.port';
import { FakeZkClient } from './fake-zk.client';
import { zkCodeOf as codeOf } from './zk-test-helpers';

async function connected(): Promise<{ zk: FakeZkClient; states: ZkConnectionState[] }> {
  const zk = new FakeZkClient();
  const states: ZkConnectionState[] = [];
  zk.onStateChange((state) => states.push(state));
  await zk.connect(100);
  return { zk, states };
}

describe('FakeZkClient', () => {
  it('numbers sequential children per parent, counting every child ever created', async () => {
    const { zk } = await connected();
    await zk.mkdirp('/a/b');
    await zk.mkdirp('/a/b'); // existing nodes are fine

    expect(await zk.createPersistentSequential('/a/b/n-', Buffer.from('x'))).toBe(
      '/a/b/n-0000000000',
    );
    await zk.mkdirp('/a/b/plain');
    await zk.delete('/a/b/n-0000000000');
    expect(await zk.createPersistentSequential('/a/b/m-', Buffer.alloc(0))).toBe(
      '/a/b/m-0000000002',
    );
    // `/a` has one child (b): its own counter is independent.
    expect(await zk.createPersistentSequential('/a/', Buffer.alloc(0))).toBe('/a/0000000001');
    expect((await zk.getChildren('/a/b')).sort()).toEqual(['m-0000000002', 'plain']);
  });

  it('raises NODE_EXISTS when the sequential name is taken, without consuming a number', async () => {
    const { zk } = await connected();
    await zk.mkdirp('/p/s-0000000001'); // /p has created one child: the next suffix is 1

    expect(await codeOf(zk.createPersistentSequential('/p/s-', Buffer.alloc(0)))).toBe(
      'NODE_EXISTS',
    );
    await zk.mkdirp('/p/other');
    expect(await zk.createPersistentSequential('/p/s-', Buffer.alloc(0))).toBe('/p/s-0000000002');
  });

  it('creates ephemeral nodes that vanish when the session expires or the client closes', async () => {
    const { zk, states } = await connected();
    expect(await codeOf(zk.createEphemeral('/e/alive/1', Buffer.from('x')))).toBe('NO_NODE');
    await zk.mkdirp('/e/alive');
    await zk.createEphemeral('/e/alive/1', Buffer.from('x'));
    expect(await codeOf(zk.createEphemeral('/e/alive/1', Buffer.from('y')))).toBe('NODE_EXISTS');
    expect(await zk.getData('/e/alive/1')).toEqual({ data: Buffer.from('x'), version: 0 });

    zk.simulateExpiry();
    expect(states.slice(-2)).toEqual(['expired', 'connected']);
    expect(zk.paths()).not.toContain('/e/alive/1');
    await zk.createEphemeral('/e/alive/1', Buffer.from('z'));
    await zk.delete('/e/alive/1');
    await zk.createEphemeral('/e/alive/2', Buffer.alloc(0));
    await zk.close();
    expect(zk.paths()).toEqual(['/', '/e', '/e/alive']);
  });

  it('versions data and refuses stale writes and deletes', async () => {
    const { zk } = await connected();
    await zk.mkdirp('/v');
    expect(await zk.getData('/v')).toEqual({ data: Buffer.alloc(0), version: 0 });
    await zk.setData('/v', Buffer.from('one'), 0);
    await zk.setData('/v', Buffer.from('two'));
    expect(await zk.getData('/v')).toEqual({ data: Buffer.from('two'), version: 2 });

    expect(await codeOf(zk.setData('/v', Buffer.from('x'), 1))).toBe('BAD_VERSION');
    expect(await codeOf(zk.delete('/v', 1))).toBe('BAD_VERSION');
    expect(await codeOf(zk.getData('/missing'))).toBe('NO_NODE');
    expect(await codeOf(zk.getChildren('/missing'))).toBe('NO_NODE');
    expect(await codeOf(zk.setData('/missing', Buffer.alloc(0)))).toBe('NO_NODE');
    expect(await codeOf(zk.delete('/missing'))).toBe('NO_NODE');
    expect(await codeOf(zk.createPersistentSequential('/missing/x-', Buffer.alloc(0)))).toBe(
      'NO_NODE',
    );
    await zk.delete('/v', 2);
    expect(zk.paths()).toEqual(['/']);
  });

  it('reports disconnects and expiry, failing calls in between', async () => {
    const { zk, states } = await connected();
    await zk.mkdirp('/kept');

    zk.simulateDisconnect();
    expect(zk.connected).toBe(false);
    expect(await codeOf(zk.getData('/kept'))).toBe('CONNECTION_LOSS');
    zk.simulateReconnect();
    zk.simulateExpiry();

    expect(states).toEqual(['connected', 'disconnected', 'connected', 'expired', 'connected']);
    expect(zk.connected).toBe(true);
    expect((await zk.getData('/kept')).version).toBe(0);
  });

  it('fails the next call of an operation on demand', async () => {
    const { zk } = await connected();
    await zk.mkdirp('/f');
    zk.failNext('getData', 'SESSION_EXPIRED');
    zk.failNext('getData', 'CONNECTION_LOSS');

    expect(await codeOf(zk.getData('/f'))).toBe('SESSION_EXPIRED');
    expect(await codeOf(zk.getData('/f'))).toBe('CONNECTION_LOSS');
    expect((await zk.getData('/f')).version).toBe(0);
  });

  it('can lose the response of a create that happened', async () => {
    const { zk } = await connected();
    await zk.mkdirp('/w');
    zk.loseResponseOfNextCreate();

    expect(await codeOf(zk.createPersistentSequential('/w/n-', Buffer.from('1')))).toBe(
      'CONNECTION_LOSS',
    );
    expect(await zk.getChildren('/w')).toEqual(['n-0000000000']);
    expect(await zk.createPersistentSequential('/w/n-', Buffer.from('2'))).toBe('/w/n-0000000001');
  });

  it('when unavailable, fails calls and times connect out; recovers when available', async () => {
    const zk = new FakeZkClient();
    const states: ZkConnectionState[] = [];
    zk.onStateChange((state) => states.push(state));
    zk.setUnavailable(true);

    expect(await codeOf(zk.connect(5))).toBe('TIMEOUT');
    expect(await codeOf(zk.getChildren('/'))).toBe('CONNECTION_LOSS');

    const pending = zk.connect(10_000);
    zk.setUnavailable(false);
    await pending;
    zk.setUnavailable(true);
    expect(states).toEqual(['connected', 'disconnected']);
  });

  it('rejects everything with CLOSED after close, including a pending connect', async () => {
    const zk = new FakeZkClient();
    zk.setUnavailable(true);
    const pending = codeOf(zk.connect(10_000));
    await zk.close();

    expect(await pending).toBe('CLOSED');
    expect(await codeOf(zk.connect(10))).toBe('CLOSED');
    expect(await codeOf(zk.mkdirp('/x'))).toBe('CLOSED');
  });
});
