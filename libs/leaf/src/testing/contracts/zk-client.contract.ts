import { ZkError, type ZkClient, type ZkErrorCode } from '../../core/zookeeper/zk-client.port';
import { eventually } from '../eventually';
import { defineContract } from './contract-runner';

/**
 * What {@link zkClientContract} needs of one implementation.
 */
export interface ZkClientHarness {
  /**
   * An absolute path no one else uses, for this run only (it need not exist yet); every
   * node a case creates is below it.
   */
  readonly root: string;
  /**
   * A new, not yet connected client on the same ZooKeeper (for the fake: a second session
   * on the same tree). The contract connects and closes it.
   */
  newClient(): ZkClient;
  /** Removes everything below `root` and releases what `open` acquired (once, at the end). */
  close(): Promise<void>;
}

/** The `zkCode` of a rejection; fails the case on success or on anything but a ZkError. */
async function codeOf(promise: Promise<unknown>): Promise<ZkErrorCode> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ZkError) return error.zkCode;
    throw new Error(`expected a ZkError, got ${String(error)}`, { cause: error });
  }
  throw new Error('expected a ZkError rejection, got a result');
}

const SEQUENCE = /^(.*?)(\d{10})$/;

/**
 * The behaviour every {@link ZkClient} must have, as test cases (Jest's or Vitest's, {@link ContractRunner}): registers a `describe`
 * block named after `name`. `open` runs once (in `beforeAll`); each case works in a fresh
 * directory below the harness's root, with clients it connects itself and closes afterwards.
 *
 * Cases: connect/`connected`, calls before connect (`CONNECTION_LOSS`) and after close
 * (`CLOSED`); `mkdirp` idempotent, empty data, version 0; persistent sequential names are
 * the prefix plus 10 digits, increasing, never reused after a delete, counting every child
 * created; `createEphemeral` `NODE_EXISTS` (same or another session) and `NO_NODE` (parent
 * missing); no children under an ephemeral node (`OTHER`); `getData`/`setData` round trip with
 * versions and `BAD_VERSION`; `delete` with a version (`BAD_VERSION`, `NO_NODE`, `OTHER` when
 * not empty); `getChildren` names and `NO_NODE`; malformed paths (`OTHER`); ephemeral nodes
 * gone, seen from a second client, once their client closes; every failure a `ZkError`.
 */
export const zkClientContract = defineContract<ZkClientHarness>('ZkClient', (harness, runner) => {
  const { it, expect, beforeEach, afterEach } = runner;
  let clients: ZkClient[] = [];
  let dir: string;
  let caseNumber = 0;

  /** A connected client, closed after the case. */
  const connect = async (): Promise<ZkClient> => {
    const client = harness().newClient();
    clients.push(client);
    await client.connect(10_000);
    return client;
  };

  beforeEach(() => {
    dir = `${harness().root}/case-${++caseNumber}`;
  });

  afterEach(async () => {
    await Promise.all(clients.map((client) => client.close()));
    clients = [];
  });

  it('connects, reports connected, and refuses calls before connect() and after close()', async () => {
    const client = harness().newClient();
    clients.push(client);
    expect(client.connected).toBe(false);
    expect(await codeOf(client.getData('/'))).toBe('CONNECTION_LOSS');
    await client.connect(10_000);
    expect(client.connected).toBe(true);
    await client.connect(10_000); // again: already connected
    await client.mkdirp(dir);
    await client.close();
    expect(client.connected).toBe(false);
    expect(await codeOf(client.getData(dir))).toBe('CLOSED');
    expect(await codeOf(client.mkdirp(`${dir}/after`))).toBe('CLOSED');
    expect(await codeOf(client.connect(1_000))).toBe('CLOSED');
    await client.close(); // twice: never throws
  });

  it('mkdirp creates every missing node with empty data at version 0, and is idempotent', async () => {
    const zk = await connect();
    await zk.mkdirp(`${dir}/a/b/c`);
    await zk.mkdirp(`${dir}/a/b/c`);
    await zk.mkdirp(`${dir}/a`);
    await zk.mkdirp(`${dir}/a/b/d`);
    expect(await zk.getChildren(dir)).toEqual(['a']);
    expect((await zk.getChildren(`${dir}/a/b`)).sort()).toEqual(['c', 'd']);
    const { data, version } = await zk.getData(`${dir}/a/b/c`);
    expect(data.length).toBe(0);
    expect(version).toBe(0);
  });

  it('names persistent sequential nodes prefix + 10 digits, increasing, never reusing a deleted number', async () => {
    const zk = await connect();
    await zk.mkdirp(`${dir}/seq`);
    const first = await zk.createPersistentSequential(`${dir}/seq/n-`, Buffer.from('one'));
    const second = await zk.createPersistentSequential(`${dir}/seq/n-`, Buffer.from('two'));
    expect(first).toMatch(SEQUENCE);
    expect(first.startsWith(`${dir}/seq/n-`)).toBe(true);
    expect(first).toBe(`${dir}/seq/n-0000000000`);
    expect(second).toBe(`${dir}/seq/n-0000000001`);
    expect((await zk.getData(second)).data.toString()).toBe('two');

    // The sequence counts every child ever created under the parent, sequential or not,
    // and a deletion gives no number back.
    await zk.delete(second);
    await zk.mkdirp(`${dir}/seq/plain`);
    const third = await zk.createPersistentSequential(`${dir}/seq/m-`, Buffer.alloc(0));
    expect(third).toBe(`${dir}/seq/m-0000000003`);
    // A prefix ending in '/': the name is the 10 digits alone.
    expect(await zk.createPersistentSequential(`${dir}/seq/`, Buffer.alloc(0))).toBe(
      `${dir}/seq/0000000004`,
    );
    expect((await zk.getChildren(`${dir}/seq`)).sort()).toEqual([
      '0000000004',
      'm-0000000003',
      'n-0000000000',
      'plain',
    ]);
    expect(await codeOf(zk.createPersistentSequential(`${dir}/missing/n-`, Buffer.alloc(0)))).toBe(
      'NO_NODE',
    );
  });

  it('creates ephemeral nodes: NODE_EXISTS from any session, NO_NODE without a parent, no children', async () => {
    const zk = await connect();
    const other = await connect();
    await zk.mkdirp(`${dir}/alive`);
    expect(await codeOf(zk.createEphemeral(`${dir}/missing/1`, Buffer.alloc(0)))).toBe('NO_NODE');

    await zk.createEphemeral(`${dir}/alive/1`, Buffer.from('mine'));
    expect(await codeOf(zk.createEphemeral(`${dir}/alive/1`, Buffer.from('again')))).toBe(
      'NODE_EXISTS',
    );
    expect(await codeOf(other.createEphemeral(`${dir}/alive/1`, Buffer.from('theirs')))).toBe(
      'NODE_EXISTS',
    );
    expect(await other.getData(`${dir}/alive/1`)).toEqual({
      data: Buffer.from('mine'),
      version: 0,
    });
    // ZooKeeper allows no children under an ephemeral node.
    expect(await codeOf(zk.createEphemeral(`${dir}/alive/1/child`, Buffer.alloc(0)))).toBe('OTHER');
    expect(await codeOf(zk.createPersistentSequential(`${dir}/alive/1/s-`, Buffer.alloc(0)))).toBe(
      'OTHER',
    );
    expect(await codeOf(zk.mkdirp(`${dir}/alive/1/deeper`))).toBe('OTHER');
  });

  it('removes ephemeral nodes when their client closes, as another client sees', async () => {
    const owner = await connect();
    const observer = await connect();
    await owner.mkdirp(`${dir}/alive`);
    await owner.createEphemeral(`${dir}/alive/owner`, Buffer.from('x'));
    await observer.createEphemeral(`${dir}/alive/observer`, Buffer.from('y'));
    expect((await observer.getChildren(`${dir}/alive`)).sort()).toEqual(['observer', 'owner']);

    await owner.close();
    await eventually(async () => {
      expect(await codeOf(observer.getData(`${dir}/alive/owner`))).toBe('NO_NODE');
    }, 5_000);
    // Only the closed client's nodes: the observer's own ephemeral node stays.
    expect(await observer.getChildren(`${dir}/alive`)).toEqual(['observer']);
    // The path is free again, for any session.
    await observer.createEphemeral(`${dir}/alive/owner`, Buffer.from('z'));
    expect((await observer.getData(`${dir}/alive/owner`)).data.toString()).toBe('z');
  });

  it('reads and writes data with versions: BAD_VERSION on a stale one, -1 or none for any', async () => {
    const zk = await connect();
    const other = await connect();
    const path = `${dir}/node`;
    await zk.mkdirp(path);
    const bytes = Buffer.from([0, 1, 2, 255, 0]);
    await zk.setData(path, bytes, 0);
    expect(await other.getData(path)).toEqual({ data: bytes, version: 1 });

    expect(await codeOf(other.setData(path, Buffer.from('stale'), 0))).toBe('BAD_VERSION');
    expect(await codeOf(other.setData(path, Buffer.from('ahead'), 5))).toBe('BAD_VERSION');
    expect(await zk.getData(path)).toEqual({ data: bytes, version: 1 });

    await other.setData(path, Buffer.from('any'), -1);
    await zk.setData(path, Buffer.from('no version'));
    expect(await zk.getData(path)).toEqual({ data: Buffer.from('no version'), version: 3 });
    await zk.setData(path, Buffer.alloc(0), 3);
    const emptied = await zk.getData(path);
    expect(emptied.data.length).toBe(0);
    expect(emptied.version).toBe(4);

    expect(await codeOf(zk.getData(`${dir}/missing`))).toBe('NO_NODE');
    expect(await codeOf(zk.setData(`${dir}/missing`, Buffer.alloc(0)))).toBe('NO_NODE');
  });

  it('deletes with a version: BAD_VERSION on a stale one, NO_NODE when gone, OTHER when not empty', async () => {
    const zk = await connect();
    await zk.mkdirp(`${dir}/parent/child`);
    await zk.setData(`${dir}/parent/child`, Buffer.from('v1'));
    expect(await codeOf(zk.delete(`${dir}/parent/child`, 0))).toBe('BAD_VERSION');
    expect(await codeOf(zk.delete(`${dir}/parent`))).toBe('OTHER');
    await zk.delete(`${dir}/parent/child`, 1);
    expect(await codeOf(zk.delete(`${dir}/parent/child`))).toBe('NO_NODE');
    expect(await codeOf(zk.getData(`${dir}/parent/child`))).toBe('NO_NODE');
    await zk.delete(`${dir}/parent`, -1);
    expect(await codeOf(zk.delete(`${dir}/parent`))).toBe('NO_NODE');
    expect(await zk.getChildren(dir)).toEqual([]);
  });

  it('lists child names (not paths), NO_NODE for a missing node', async () => {
    const zk = await connect();
    await zk.mkdirp(`${dir}/list/x`);
    await zk.mkdirp(`${dir}/list/y`);
    await zk.createEphemeral(`${dir}/list/z`, Buffer.alloc(0));
    expect((await zk.getChildren(`${dir}/list`)).sort()).toEqual(['x', 'y', 'z']);
    expect(await zk.getChildren(`${dir}/list/x`)).toEqual([]);
    expect(await codeOf(zk.getChildren(`${dir}/missing`))).toBe('NO_NODE');
  });

  it('refuses malformed paths with OTHER', async () => {
    const zk = await connect();
    await zk.mkdirp(dir);
    expect(await codeOf(zk.getData('relative/path'))).toBe('OTHER');
    expect(await codeOf(zk.getData(`${dir}/`))).toBe('OTHER');
    expect(await codeOf(zk.mkdirp('relative/path'))).toBe('OTHER');
    expect(await codeOf(zk.createEphemeral(`${dir}//double`, Buffer.alloc(0)))).toBe('OTHER');
    expect(await codeOf(zk.delete('/'))).toBe('OTHER');
  });
});
