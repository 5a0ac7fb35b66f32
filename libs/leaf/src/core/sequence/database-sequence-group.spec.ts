import { AllocationError } from '../errors/allocation.error';
import { LeafErrorCode } from '../errors/leaf.error';
import { SequenceFencedError } from '../errors/sequence.error';
import { FakeClock } from '../../testing/fake-clock';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { InMemorySequenceIssuerStore } from '../../testing/in-memory-sequence-issuer.store';
import type { IssuerFence } from '../segment/leaf-alloc-store.port';
import { sequenceTestBuffer } from '../../testing/test-helpers';
import {
  DatabaseSequenceGroup,
  type DatabaseSequenceGroupOptions,
} from './database-sequence-group';

const buffer = sequenceTestBuffer;
const LEASE = 10_000;
const MARGIN = 2_000;

/**
 * Instances of one group against one issuer table. Three clocks: each instance's monotonic
 * clock (`mono`, shared unless a test pauses one), the wall clock and the database's clock.
 */
function cluster(step = 10) {
  const alloc = new InMemoryAllocStore().setTag('k', step).setTag('j', step);
  const clock = new FakeClock();
  let dbNow = 0;
  const table = new InMemorySequenceIssuerStore(() => dbNow);
  let mono = 0;
  let allocationFails = false;
  const events: string[] = [];
  const loader = (tag: string, s: number | undefined, fence?: IssuerFence) => {
    if (allocationFails) return Promise.reject(new AllocationError(tag, 'database down'));
    // The check of the allocation's transaction (TypeormSequenceIssuerStore's fence).
    if (fence) table.assertFence(tag, fence);
    return alloc.allocate(tag, s);
  };
  function instance(name: string, extra: Partial<DatabaseSequenceGroupOptions> = {}) {
    return new DatabaseSequenceGroup(
      table,
      {
        name: 'leaf',
        group: 0,
        address: `http://${name}`,
        run: name,
        leaseMs: LEASE,
        leaseMarginMs: MARGIN,
        buffer,
        resignAfterFailingMs: 1000,
        ...extra,
      },
      {
        loader,
        clock,
        monotonic: () => mono,
        listener: {
          elected: (group, term) => events.push(`${name} elected ${term}`),
          demoted: (group, reason) => events.push(`${name} demoted: ${reason}`),
        },
      },
    );
  }
  return {
    table,
    events,
    instance,
    /** Real time passing: every clock moves. */
    advance: (ms: number) => {
      mono += ms;
      dbNow += ms;
      clock.advance(ms);
    },
    /** Only the database's clock moves (it runs fast, or this host stood still). */
    advanceDatabaseOnly: (ms: number) => {
      dbNow += ms;
    },
    failAllocations: (fail: boolean) => {
      allocationFails = fail;
    },
  };
}

async function take(group: DatabaseSequenceGroup, key = 'k'): Promise<bigint> {
  return (await group.issue(key, 1)).start;
}

/** One ID of `k` from `group` is refused with `code`. */
async function expectRefused(group: DatabaseSequenceGroup, code: LeafErrorCode): Promise<void> {
  await expect(group.issue('k', 1)).rejects.toMatchObject({ code });
}

/** Instances `a` and `b` of one cluster after `a`'s first round: `a` holds the row (term 1). */
async function claimedByA() {
  const c = cluster();
  const a = c.instance('a');
  const b = c.instance('b');
  await a.tick();
  return { c, a, b };
}

/**
 * `b`'s round claims the row: term 2, whose first range lies above everything term 1 was
 * granted (its first range and the one preloaded, 11..20).
 */
async function expectSuccessor(b: DatabaseSequenceGroup): Promise<void> {
  await b.tick();
  expect(b.state).toBe('issuer');
  expect(b.term).toBe(2);
  expect(await take(b)).toBe(21n);
}

describe('DatabaseSequenceGroup', () => {
  it('the first round claims the free row (term 1); another instance learns the issuer from it and does not issue', async () => {
    const { c, a, b } = await claimedByA();
    await b.tick();
    expect(a.state).toBe('issuer');
    expect(a.term).toBe(1);
    expect(a.issuing).toBe(true);
    expect(b.state).toBe('candidate');
    expect(b.issuerAddress).toBe('http://a');
    expect(await take(a)).toBe(1n);
    expect(await take(a)).toBe(2n);
    await expectRefused(b, LeafErrorCode.SEQUENCE_NO_ISSUER);
    expect(c.table.peek('leaf', 0)).toMatchObject({ holder: 'a', term: 1n });
  });

  it('a key unknown to leaf_alloc creates nothing on the issuer: refused with LEAF_TAG_NOT_FOUND, no buffer kept', async () => {
    const c = cluster();
    const a = c.instance('a');
    await a.tick();
    expect(await take(a)).toBe(1n);
    expect(a.snapshot().keys).toBe(1);
    for (let i = 0; i < 50; i++) {
      await expect(a.issue(`unknown-${i}`, 1)).rejects.toMatchObject({
        code: LeafErrorCode.TAG_NOT_FOUND,
      });
    }
    expect(a.snapshot()).toMatchObject({ state: 'issuer', keys: 1 });
    expect(await take(a)).toBe(2n);
  });

  it('renewals extend the lease from their send time; without them the issuer stops at lease − margin, before the row expires on the database clock, and only then may another claim', async () => {
    const { c, a, b } = await claimedByA();
    expect(await take(a)).toBe(1n);
    c.advance(5_000);
    await a.tick(); // renewal at t = 5 s: lease to 13 s
    c.advance(7_000);
    expect(await take(a)).toBe(2n); // t = 12 s
    c.table.failing = true; // the database unreachable from here on
    c.advance(1_000); // t = 13 s = 5 + LEASE − MARGIN
    await a.tick();
    await expectRefused(a, LeafErrorCode.SEQUENCE_LEASE_EXPIRED);
    c.table.failing = false;
    c.advance(1_999); // t = 14.999 s: the row (to 15 s) has not expired
    await b.tick();
    expect(b.state).toBe('candidate');
    c.advance(2); // past 15 s on the database's clock
    await expectSuccessor(b);
    // The old issuer's renewal finds the row claimed: demoted at once.
    await a.tick();
    expect(a.state).toBe('candidate');
    expect(a.issuerAddress).toBeNull();
    await a.tick();
    expect(a.issuerAddress).toBe('http://b');
    expect(c.events).toEqual([
      'a elected 1',
      'b elected 2',
      'a demoted: the issuer row of group 0 is no longer ours (term 1)',
    ]);
  });

  it('a deposed issuer whose lease still looks valid is never granted a range: the fenced allocation refuses it and it stops at once', async () => {
    const { c, a, b } = await claimedByA();
    expect(await take(a)).toBe(1n);
    // The database's clock ran ahead (or this host stood still): the row expired there
    // while a's own clocks say its lease holds.
    c.advanceDatabaseOnly(LEASE + 1);
    await b.tick();
    expect(b.state).toBe('issuer');
    expect(a.issuing).toBe(true);
    // A key without a range yet: its first allocation carries term 1 and is refused.
    const refused = await a.issue('j', 1).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: LeafErrorCode.SEQUENCE_NO_ISSUER });
    expect((refused as Error).cause).toBeInstanceOf(SequenceFencedError);
    expect((refused as { cause: SequenceFencedError }).cause).toMatchObject({
      code: LeafErrorCode.SEQUENCE_FENCED,
      group: 0,
      term: '1',
    });
    expect(a.state).toBe('candidate');
    expect(await take(b, 'j')).toBe(1n);
  });

  it('resigning expires the row at once: the successor claims at its next round without waiting out the lease', async () => {
    const { c, a, b } = await claimedByA();
    expect(await take(a)).toBe(1n);
    await b.tick();
    await a.resign();
    expect(a.state).toBe('stopped');
    await expectRefused(a, LeafErrorCode.SEQUENCE_NO_ISSUER);
    c.advance(1);
    await expectSuccessor(b);
    // A stopped group keeps reading who issues, for calls that arrive while it shuts down.
    await a.tick();
    expect(a.issuerAddress).toBe('http://b');
  });

  it('a resignation does not touch a row another instance claimed since', async () => {
    const { c, a, b } = await claimedByA();
    c.advanceDatabaseOnly(LEASE + 1);
    await b.tick();
    await a.resign();
    expect(c.table.peek('leaf', 0)).toMatchObject({ holder: 'b', term: 2n });
    c.advance(1);
    await b.tick();
    expect(b.issuing).toBe(true);
  });

  it('two candidates racing for one expired row: one claim wins, the other stays a candidate', async () => {
    const c = cluster();
    const a = c.instance('a');
    const b = c.instance('b');
    await Promise.all([a.tick(), b.tick()]);
    expect([a.state, b.state].sort()).toEqual(['candidate', 'issuer']);
    expect(c.table.peek('leaf', 0).term).toBe(1n);
  });

  it('an issuer whose allocations keep failing hands over: it expires its row and claims none for a lease', async () => {
    const { c, a, b } = await claimedByA();
    await b.tick();
    c.failAllocations(true);
    await expectRefused(a, LeafErrorCode.ALLOCATION_FAILED);
    c.advance(600);
    await expectRefused(a, LeafErrorCode.ALLOCATION_FAILED);
    c.advance(600);
    await expectRefused(a, LeafErrorCode.ALLOCATION_FAILED);
    await a.tick();
    expect(a.state).toBe('candidate');
    c.failAllocations(false);
    c.advance(1);
    await a.tick(); // abstains
    expect(a.state).toBe('candidate');
    await b.tick();
    expect(b.state).toBe('issuer');
    expect(await take(b)).toBe(1n);
  });

  it('an instance not yet eligible, or within its claim delay, leaves a free row to others', async () => {
    const c = cluster();
    let eligible = false;
    const a = c.instance('a', { eligible: () => eligible, claimDelayMs: () => 500 });
    await a.tick();
    expect(a.state).toBe('candidate');
    eligible = true;
    await a.tick(); // first seen free: the delay starts
    expect(a.state).toBe('candidate');
    c.advance(499);
    await a.tick();
    expect(a.state).toBe('candidate');
    c.advance(1);
    await a.tick();
    expect(a.state).toBe('issuer');
  });

  it('a claim whose answer was lost is taken up at the next round by a renewal, not left to expire', async () => {
    const c = cluster();
    const a = c.instance('a');
    const claim = c.table.claim.bind(c.table);
    c.table.claim = async (...args) => {
      await claim(...args);
      throw new Error('connection lost after the UPDATE');
    };
    await a.tick();
    expect(a.state).toBe('candidate');
    expect(c.table.peek('leaf', 0)).toMatchObject({ holder: 'a', term: 1n });
    c.advance(100);
    await a.tick();
    expect(a.state).toBe('issuer');
    expect(a.term).toBe(1);
    expect(await take(a)).toBe(1n);
  });

  it('the database unreachable: rounds do not throw, the group says so, and the issuer keeps its lease until it runs out', async () => {
    const c = cluster();
    const a = c.instance('a');
    await a.tick();
    expect(a.reachable).toBe(true);
    c.table.failing = true;
    await a.tick();
    expect(a.reachable).toBe(false);
    expect(a.issuing).toBe(true);
    c.advance(LEASE - MARGIN);
    expect(a.issuing).toBe(false);
    expect(a.snapshot()).toMatchObject({ state: 'issuer', term: 1, leaseRemainingMs: 0 });
  });
});
