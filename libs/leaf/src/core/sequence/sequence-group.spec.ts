import { AllocationError, AllocationRegressedError } from '../errors/allocation.error';
import { LeafErrorCode } from '../errors/leaf.error';
import { FakeClock } from '../../testing/fake-clock';
import { FakeZkClient } from '../../testing/fake-zk.client';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { sequenceTestBuffer } from '../../testing/test-helpers';
import { SequenceGroup } from './sequence-group';
import type { SequenceGroupListener, SequenceGroupOptions } from './sequence-group.options';

const buffer = sequenceTestBuffer;
const SESSION = 10_000;
const MARGIN = 2_000;
const HAND_OVER = 1_000;

/** Lets settled promises run their continuations. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

/** The options of instance `name` in group 0; `extra` wins. */
const optionsOf = (
  name: string,
  extra: Partial<SequenceGroupOptions> = {},
): SequenceGroupOptions => ({
  root: '/sequence/test/groups/0',
  group: 0,
  address: `http://${name}`,
  run: name,
  sessionTimeoutMs: SESSION,
  leaseMarginMs: MARGIN,
  buffer,
  resignAfterFailingMs: HAND_OVER,
  freshSessionWaitMs: 0,
  ...extra,
});

function cluster(
  step = 10,
  extra: Partial<Pick<SequenceGroupOptions, 'freshSessionWaitMs' | 'balance'>> = {},
) {
  const store = new InMemoryAllocStore().setTag('k', step).setTag('j', step);
  const root = new FakeZkClient();
  const clock = new FakeClock();
  let mono = 0;
  const events: string[] = [];
  const listener: SequenceGroupListener = {
    elected: (group, term) => events.push(`elected ${group} ${term}`),
    demoted: (group, reason) => events.push(`demoted ${group}: ${reason}`),
  };
  const instances: Array<{ zk: FakeZkClient; group: SequenceGroup }> = [];
  async function instance(name: string) {
    const zk = instances.length === 0 ? root : root.newSession();
    await zk.connect(100);
    const group = new SequenceGroup(zk, optionsOf(name, extra), {
      loader: (tag, s) => store.allocate(tag, s),
      clock,
      monotonic: () => mono,
      listener,
    });
    instances.push({ zk, group });
    return { zk, group };
  }
  return {
    store,
    events,
    instance,
    /** Both clocks move (real time passing). */
    advance: (ms: number) => {
      mono += ms;
      clock.advance(ms);
    },
    /** Only the wall clock moves: a suspended host whose monotonic clock stood still. */
    advanceWallOnly: (ms: number) => clock.advance(ms),
  };
}

async function ids(group: SequenceGroup, key: string, calls: number): Promise<bigint[]> {
  const out: bigint[] = [];
  for (let i = 0; i < calls; i++) out.push((await group.issue(key, 1)).start);
  return out;
}

/** One ID of `k` from `group` is refused with `code`. */
async function expectRefused(group: SequenceGroup, code: LeafErrorCode): Promise<void> {
  await expect(group.issue('k', 1)).rejects.toMatchObject({ code });
}

/**
 * Instances `a` and `b` of one cluster, their sessions `sessionAgeMs` old, after one round
 * each: `a` issues, `b` waits behind it.
 */
async function issuerAndNext(
  step = 10,
  extra: Parameters<typeof cluster>[1] = {},
  sessionAgeMs = 0,
) {
  const c = cluster(step, extra);
  const a = await c.instance('a');
  const b = await c.instance('b');
  c.advance(sessionAgeMs);
  await a.group.tick();
  await b.group.tick();
  return { c, a, b };
}

describe('SequenceGroup', () => {
  it('elects the first node; the other learns its address and refuses to issue', async () => {
    const { c, a, b } = await issuerAndNext();
    expect(a.group.state).toBe('issuer');
    expect(a.group.issuing).toBe(true);
    expect(b.group.state).toBe('candidate');
    expect(b.group.issuerAddress).toBe('http://a');
    await expectRefused(b.group, LeafErrorCode.SEQUENCE_NO_ISSUER);
    expect(await ids(a.group, 'k', 25)).toEqual(
      Array.from({ length: 25 }, (_, i) => BigInt(i + 1)),
    );
    expect(c.events).toEqual(['elected 0 1']);
  });

  it('takes batches as contiguous ranges above everything issued before', async () => {
    const c = cluster(10);
    const a = await c.instance('a');
    await a.group.tick();
    const first = await a.group.issue('k', 3);
    const big = await a.group.issue('k', 50); // larger than what is in memory
    const next = await a.group.issue('k', 1);
    expect(first).toEqual({ start: 1n, end: 4n });
    expect(big.end - big.start).toBe(50n);
    expect(big.start).toBeGreaterThanOrEqual(first.end);
    expect(next.start).toBeGreaterThanOrEqual(big.end);
  });

  it('refuses with LEAF_SEQUENCE_LEASE_EXPIRED once the lease may have run out, and renews with a heartbeat', async () => {
    const c = cluster();
    const a = await c.instance('a');
    await a.group.tick();
    await a.group.issue('k', 1);
    c.advance(SESSION - MARGIN - 1);
    await expect(a.group.issue('k', 1)).resolves.toBeDefined();
    c.advance(1);
    expect(a.group.issuing).toBe(false);
    await expectRefused(a.group, LeafErrorCode.SEQUENCE_LEASE_EXPIRED);
    // A heartbeat that reaches ZooKeeper proves the node (so no successor) is still there.
    await a.group.tick();
    await expect(a.group.issue('k', 1)).resolves.toBeDefined();
  });

  it('uses the session timeout the server granted when it is smaller than the requested one', async () => {
    const c = cluster();
    const a = await c.instance('a');
    a.zk.grantSessionTimeout(4_000);
    await a.group.tick();
    c.advance(4_000 - MARGIN);
    await expectRefused(a.group, LeafErrorCode.SEQUENCE_LEASE_EXPIRED);
  });

  it('drops IDs taken across a lease expiry instead of handing them out (the check after the take)', async () => {
    const c = cluster();
    const a = await c.instance('a');
    await a.group.tick();
    c.store.hold();
    const pending = a.group.issue('k', 1);
    const outcome = pending.then(
      () => 'issued',
      (error: { code: string }) => error.code,
    );
    await flush();
    c.advance(SESSION); // paused or cut off while the range was loading
    c.store.release();
    expect(await outcome).toBe(LeafErrorCode.SEQUENCE_LEASE_EXPIRED);
  });

  it('hands over after the issuer session expires: the successor starts from a fresh range above every ID issued', async () => {
    const { c, a, b } = await issuerAndNext(100);
    const before = await ids(a.group, 'k', 5);
    a.zk.setUnavailable(true); // partitioned: A cannot renew
    c.advance(SESSION - MARGIN);
    await a.group.tick();
    await expectRefused(a.group, LeafErrorCode.SEQUENCE_LEASE_EXPIRED);
    a.zk.simulateExpiry(); // the ensemble expires A's session: its node is deleted
    expect(a.group.state).toBe('candidate');
    await b.group.tick();
    expect(b.group.state).toBe('issuer');
    const after = await ids(b.group, 'k', 5);
    expect(after[0]).toBeGreaterThan(before[before.length - 1]!);
    // A's ranges are dropped with its term: back as a candidate it forwards to B.
    a.zk.setUnavailable(false);
    await a.group.tick();
    await a.group.tick();
    expect(a.group.issuerAddress).toBe('http://b');
    expect(c.events).toEqual([
      'elected 0 1',
      'demoted 0: the ZooKeeper session expired',
      'elected 0 1',
    ]);
  });

  it('resigns: refuses at once, deletes its node, and the successor issues above it', async () => {
    const { a, b } = await issuerAndNext(100);
    const before = await ids(a.group, 'k', 3);
    await a.group.resign();
    expect(a.group.state).toBe('stopped');
    await expectRefused(a.group, LeafErrorCode.SEQUENCE_NO_ISSUER);
    await b.group.tick();
    expect(b.group.state).toBe('issuer');
    expect((await b.group.issue('k', 1)).start).toBeGreaterThan(before[2]!);
  });

  it('joins again after its node vanished (a new session) and waits behind the current issuer', async () => {
    const { a, b } = await issuerAndNext();
    b.zk.simulateExpiry();
    await b.group.tick(); // the round notices its node is gone
    await b.group.tick(); // and joins again
    expect(b.group.state).toBe('candidate');
    expect(b.zk.paths().filter((p) => p.startsWith('/sequence/test/groups/0/'))).toHaveLength(2);
    await a.group.resign();
    await b.group.tick();
    expect(b.group.state).toBe('issuer');
  });

  it('a new term of the same instance never reuses the ranges of the old one', async () => {
    const c = cluster(100);
    const a = await c.instance('a');
    await a.group.tick();
    const first = await ids(a.group, 'k', 2);
    a.zk.simulateExpiry();
    await a.group.tick();
    await a.group.tick();
    expect(a.group.state).toBe('issuer');
    expect(a.group.term).toBe(2);
    const second = await ids(a.group, 'k', 2);
    expect(second[0]).toBeGreaterThanOrEqual(101n); // a fresh range, not the rest of [1, 101)
    expect(second[0]).toBeGreaterThan(first[1]!);
  });

  it('removes a node of its own earlier join (a lost create answer) that would block the group', async () => {
    const c = cluster();
    const a = await c.instance('a');
    // What a create whose answer was lost leaves behind: a node of this run, in this session.
    await a.zk.mkdirp('/sequence/test/groups/0');
    await a.zk.createEphemeralSequential('/sequence/test/groups/0/c-a.0-', Buffer.from('{}'));
    await a.group.tick(); // joins behind the orphan and removes it
    expect(a.group.state).toBe('candidate');
    await a.group.tick();
    expect(a.group.state).toBe('issuer');
    expect(a.zk.paths().filter((p) => p.startsWith('/sequence/test/groups/0/'))).toHaveLength(1);
  });

  it('ends the lease by whichever clock ran further: a suspend the monotonic clock missed, not a wall clock stepped back', async () => {
    const c = cluster();
    const a = await c.instance('a');
    await a.group.tick();
    c.advanceWallOnly(SESSION - MARGIN);
    await expectRefused(a.group, LeafErrorCode.SEQUENCE_LEASE_EXPIRED);
    await a.group.tick(); // a heartbeat that succeeds renews on both clocks
    await expect(a.group.issue('k', 1)).resolves.toBeDefined();
    c.advanceWallOnly(-60_000); // stepped back: the monotonic bound still holds
    c.advance(SESSION - MARGIN);
    await expectRefused(a.group, LeafErrorCode.SEQUENCE_LEASE_EXPIRED);
  });

  describe('a ZooKeeper that forgot (docs/design.md): a term issues once its session is a session timeout old', () => {
    it('an issuer elected in a young session refuses (no range allocated) until then', async () => {
      const c = cluster(10, { freshSessionWaitMs: SESSION });
      const a = await c.instance('a');
      await a.group.tick();
      expect(a.group.state).toBe('issuer');
      expect(a.group.issuing).toBe(false);
      expect(a.group.snapshot().startsInMs).toBe(SESSION);
      await expect(a.group.issue('k', 1)).rejects.toMatchObject({
        code: LeafErrorCode.SEQUENCE_NO_ISSUER,
        message: expect.stringContaining('starts in 10000 ms'),
      });
      expect(c.store.calls).toEqual([]); // a predecessor may still allocate and issue above it
      c.advance(SESSION - MARGIN);
      await a.group.tick(); // heartbeats keep the lease
      c.advance(MARGIN);
      expect(a.group.snapshot().startsInMs).toBeNull();
      await expect(a.group.issue('k', 1)).resolves.toEqual({ start: 1n, end: 2n });
    });

    it('a session that ended starts the wait again: a new session is young', async () => {
      const c = cluster(10, { freshSessionWaitMs: SESSION });
      const a = await c.instance('a');
      c.advance(SESSION);
      await a.group.tick();
      expect(a.group.issuing).toBe(true);
      a.zk.simulateExpiry(); // e.g. the adapter gave up on a server that forgot the session
      c.advance(1000);
      await a.group.tick();
      await a.group.tick();
      expect(a.group.state).toBe('issuer');
      expect(a.group.snapshot().startsInMs).toBe(SESSION - 1000);
      await expectRefused(a.group, LeafErrorCode.SEQUENCE_NO_ISSUER);
    });

    /** `a` issues and `b` waits behind it, both in sessions a session timeout old. */
    const oldPair = () => issuerAndNext(100, { freshSessionWaitMs: SESSION }, SESSION);

    it('a session that came back after a disconnection counts its age from the reconnection', async () => {
      const { c, a, b } = await oldPair();
      // The same session back, maybe from a ZooKeeper restored from a snapshot that held it.
      b.zk.simulateDisconnect();
      c.advance(1000);
      b.zk.simulateReconnect();
      await a.group.resign();
      await b.group.tick();
      expect(b.group.state).toBe('issuer');
      expect(b.group.snapshot().startsInMs).toBe(SESSION);
    });

    it('a successor whose session is old issues at once (a crash handover costs no more)', async () => {
      const { a, b } = await oldPair();
      await a.group.resign();
      await b.group.tick();
      expect(b.group.issuing).toBe(true);
    });
  });

  it('an issuer whose allocations fail with its buffer dry hands the group over to the next in line', async () => {
    const { c, a, b } = await issuerAndNext(100);
    const fail = () => {
      c.store.failNext(new AllocationError('k', 'connect ETIMEDOUT'));
      return expect(a.group.issue('k', 1)).rejects.toBeInstanceOf(AllocationError);
    };
    // One failure, then no more calls: no evidence that the database is still unreachable.
    await fail();
    c.advance(HAND_OVER);
    await a.group.tick();
    expect(a.group.state).toBe('issuer');
    // A streak: failing for the whole period, and still failing.
    await fail();
    c.advance(HAND_OVER - 1);
    await fail();
    await a.group.tick();
    expect(a.group.state).toBe('issuer');
    c.advance(1);
    await a.group.tick();
    expect(a.group.state).toBe('candidate');
    expect(c.events.at(-1)).toMatch(
      /^demoted 0: handed over: its allocations have failed for 1000 ms$/,
    );
    await b.group.tick();
    expect(b.group.state).toBe('issuer');
    await a.group.tick(); // joins again, at the end of the line
    await a.group.tick();
    expect(a.group.issuerAddress).toBe('http://b');
    await expect(b.group.issue('k', 1)).resolves.toEqual({ start: 1n, end: 2n }); // the failure took nothing
  });

  it('keeps the group when no other instance could take it, and when the refusal is a regression', async () => {
    const c = cluster(100);
    const a = await c.instance('a');
    await a.group.tick();
    c.store.failNext(new AllocationError('k', 'connect ETIMEDOUT'));
    await expect(a.group.issue('k', 1)).rejects.toBeInstanceOf(AllocationError);
    c.advance(HAND_OVER);
    await a.group.tick();
    expect(a.group.state).toBe('issuer'); // alone: nobody to hand over to
    const b = await c.instance('b');
    await b.group.tick();
    await expect(a.group.issue('k', 1)).resolves.toEqual({ start: 1n, end: 2n });
    // A range below what this instance holds: a successor without its memory would serve it.
    c.store.failNext(new AllocationRegressedError('j', 1n, 101n, 201n));
    await expect(a.group.issue('j', 1)).rejects.toBeInstanceOf(AllocationRegressedError);
    c.advance(HAND_OVER);
    await a.group.tick();
    expect(a.group.state).toBe('issuer');
  });

  it('does not stand for election while not eligible (its address unchecked), and learns the issuer', async () => {
    let eligible = false;
    const c = cluster(10, {});
    const a = await c.instance('a');
    await a.group.tick();
    const b = await c.instance('b');
    // b's own options: not eligible yet.
    const gated = new SequenceGroup(b.zk, optionsOf('b2', { eligible: () => eligible }), {
      loader: (tag, s) => c.store.allocate(tag, s),
      clock: new FakeClock(),
      monotonic: () => 0,
      listener: null,
    });
    await a.group.resign();
    await gated.tick();
    expect(gated.state).toBe('candidate');
    expect(b.zk.paths().filter((p) => p.includes('c-b2.'))).toEqual([]);
    eligible = true;
    await gated.tick();
    await gated.tick();
    expect(gated.state).toBe('issuer');
  });

  describe('fair shares', () => {
    it('a free group goes to the next in line when this instance issues its share, once the next one is seen for a session timeout', async () => {
      const asked: string[] = [];
      const balance = {
        full: (next: string) => {
          asked.push(next);
          return true;
        },
        over: () => false,
      };
      const c = cluster(10, { balance });
      const h = await c.instance('h');
      await h.group.tick(); // alone: takes the group although "full"
      expect(h.group.state).toBe('issuer');
      const a = await c.instance('a');
      const b = await c.instance('b');
      await a.group.tick();
      await b.group.tick();
      await a.group.tick(); // a sees b's node from now on
      c.advance(SESSION);
      await h.group.resign();
      await a.group.tick(); // first in line, full against b, b seen for a session timeout: a yields
      expect(a.group.state).toBe('candidate');
      expect(asked).toEqual(['http://b']);
      await a.group.tick(); // a joins again, behind b
      await b.group.tick();
      // b is full too, but a's new node is new to b: its session may be young, b takes it.
      expect(b.group.state).toBe('issuer');
      expect(asked).toEqual(['http://b']);
      await a.group.tick();
      expect(a.group.issuerAddress).toBe('http://b');
    });

    it('an issuer over its share hands the group to the next in line once that one is seen for a session timeout', async () => {
      const balance = { full: () => false, over: () => true };
      const { c, a, b } = await issuerAndNext(100, { balance });
      expect(a.group.state).toBe('issuer');
      await a.group.tick(); // b's node is new to a
      expect(a.group.state).toBe('issuer');
      c.advance(SESSION - MARGIN - 1);
      await a.group.tick();
      expect(a.group.state).toBe('issuer');
      c.advance(MARGIN + 1);
      await a.group.tick();
      expect(a.group.state).toBe('candidate');
      expect(c.events.at(-1)).toBe(
        'demoted 0: handed over: it issues more than its share of the groups',
      );
      await b.group.tick();
      expect(b.group.state).toBe('issuer');
    });
  });
});
