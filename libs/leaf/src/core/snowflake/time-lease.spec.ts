import { LeafErrorCode } from '../errors/leaf.error';
import { ShuttingDownError } from '../errors/shutting-down.error';
import { TimeLeaseUnavailableError } from '../errors/time-lease-unavailable.error';
import { FakeClock } from '../../testing/fake-clock';
import { TimeLease, type LeaseCommit, type LeaseCommitter } from './time-lease';

const T0 = 1_700_000_000_000;

/** A committer whose commits the test resolves or fails by hand. */
class ManualCommitter implements LeaseCommitter {
  readonly commits: Array<{
    target: number;
    now: number;
    current: number;
    resolve: (c: LeaseCommit) => void;
    reject: (e: unknown) => void;
  }> = [];
  readonly releases: Array<{ final: number; now: number }> = [];
  auto: ((target: number, now: number) => LeaseCommit | Error) | null = (target) => ({
    granted: target,
  });

  commit(target: number, now: number, current: number): Promise<LeaseCommit> {
    return new Promise((resolve, reject) => {
      if (this.auto) {
        const outcome = this.auto(target, now);
        return outcome instanceof Error ? reject(outcome) : resolve(outcome);
      }
      this.commits.push({ target, now, current, resolve, reject });
    });
  }

  async release(final: number, now: number): Promise<void> {
    this.releases.push({ final, now });
  }
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

function setup(initial = T0 - 1) {
  const clock = new FakeClock(T0);
  const committer = new ManualCommitter();
  const lease = new TimeLease(3, initial, committer, clock, {
    leaseMs: 10_000,
    renewBeforeMs: 3_500,
    retryBackoffMs: 1000,
  });
  return { clock, committer, lease };
}

describe('TimeLease', () => {
  it('extends to now + leaseMs only after the committer made it durable', async () => {
    const { lease, committer } = setup();
    committer.auto = null;
    const extending = lease.extend();
    expect(lease.reservedUntil).toBe(T0 - 1);
    expect(lease.issuableUntil).toBe(T0 - 1);
    committer.commits[0]!.resolve({ granted: T0 + 10_000 });
    await extending;
    expect(lease.reservedUntil).toBe(T0 + 10_000);
    expect(lease.issuableUntil).toBe(T0 + 10_000);
    expect(committer.commits[0]).toMatchObject({ target: T0 + 10_000, now: T0, current: T0 - 1 });
  });

  it('runs one extension at a time; callers share it', async () => {
    const { lease, committer } = setup();
    committer.auto = null;
    const a = lease.extend();
    const b = lease.extend();
    const c = lease.cover(T0);
    expect(committer.commits).toHaveLength(1);
    committer.commits[0]!.resolve({ granted: T0 + 10_000 });
    await Promise.all([a, b, c]);
    expect(committer.commits).toHaveLength(1);
  });

  it('covers a timestamp within the bound without writing anything', async () => {
    const { lease, committer, clock } = setup();
    await lease.extend();
    committer.auto = null;
    clock.advance(9_000);
    await lease.cover(clock.now());
    expect(committer.commits).toHaveLength(0);
  });

  it('fails closed when the bound cannot be extended, and keeps the old bound', async () => {
    const { lease, committer, clock } = setup();
    await lease.extend();
    committer.auto = () => new Error('ZooKeeper unreachable and disk full');
    clock.advance(10_001);
    const error = await lease.cover(clock.now()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeLeaseUnavailableError);
    expect(error).toMatchObject({
      code: LeafErrorCode.TIME_LEASE_UNAVAILABLE,
      workerId: 3,
      reservedUntil: T0 + 10_000,
      retryAfterMs: 1000,
    });
    expect(lease.reservedUntil).toBe(T0 + 10_000);
    expect(lease.snapshot().lastError).toContain('disk full');
  });

  it('after a failure answers at once for retryBackoffMs instead of hammering the stores', async () => {
    const { lease, committer, clock } = setup();
    let attempts = 0;
    committer.auto = () => {
      attempts++;
      return new Error('down');
    };
    await expect(lease.cover(T0)).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    await expect(lease.cover(T0)).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    expect(attempts).toBe(1);
    clock.advance(1000);
    committer.auto = (target) => ({ granted: target });
    await lease.cover(clock.now());
    expect(lease.reservedUntil).toBe(T0 + 1000 + 10_000);
  });

  it('accepts a shorter (degraded) grant that still covers now, and refuses beyond it', async () => {
    const { lease, committer, clock } = setup();
    committer.auto = (_target, now) => ({
      granted: now + 2000,
      degraded: 'ZooKeeper is not connected; local runway',
    });
    await lease.cover(T0);
    expect(lease.reservedUntil).toBe(T0 + 2000);
    expect(lease.snapshot().degraded).toContain('local runway');
    committer.auto = () => ({ granted: T0 + 2000, degraded: 'runway used up' });
    clock.advance(2001);
    await expect(lease.cover(clock.now())).rejects.toThrow(/runway used up/);
  });

  it('renews in the background when a new millisecond comes close to the bound', async () => {
    const { lease, committer, clock } = setup();
    await lease.extend();
    committer.auto = null;
    clock.advance(6_000);
    lease.maybeRenew(clock.now()); // 4 s left: not yet
    expect(lease.extending).toBe(false);
    clock.advance(1_000);
    lease.maybeRenew(clock.now()); // 3 s left
    expect(lease.extending).toBe(true);
    lease.maybeRenew(clock.now());
    expect(committer.commits).toHaveLength(1);
    committer.commits[0]!.reject(new Error('late failure'));
    await flush();
    expect(lease.extending).toBe(false);
    expect(lease.reservedUntil).toBe(T0 + 10_000); // a failed background renewal changes nothing
    lease.maybeRenew(clock.now()); // backing off
    expect(lease.extending).toBe(false);
  });

  it('lets extendAfterCurrent start a fresh extension after the one in flight', async () => {
    const { lease, committer, clock } = setup();
    committer.auto = null;
    const first = lease.extend();
    const fresh = lease.extendAfterCurrent();
    clock.advance(500);
    committer.commits[0]!.resolve({ granted: T0 + 10_000 });
    await first;
    await flush();
    expect(committer.commits).toHaveLength(2);
    committer.commits[1]!.resolve({ granted: T0 + 10_500 });
    await fresh;
    expect(lease.reservedUntil).toBe(T0 + 10_500);
  });

  it('on release stops issuing, waits for the extension in flight, then records the last millisecond used', async () => {
    const { lease, committer } = setup();
    committer.auto = null;
    const extending = lease.extend().catch(() => undefined);
    const released = lease.release(() => T0 + 42);
    expect(lease.issuableUntil).toBe(Number.NEGATIVE_INFINITY);
    expect(committer.releases).toHaveLength(0);
    committer.commits[0]!.resolve({ granted: T0 + 10_000 });
    await Promise.all([extending, released]);
    expect(lease.issuableUntil).toBe(Number.NEGATIVE_INFINITY); // stays closed
    expect(committer.releases).toEqual([{ final: T0 + 42, now: T0 }]);
    await expect(lease.cover(T0)).rejects.toBeInstanceOf(ShuttingDownError);
    await expect(lease.extend()).rejects.toBeInstanceOf(ShuttingDownError);
  });

  it('never records a final bound above the bound in force', async () => {
    const { lease, committer } = setup(T0 + 5);
    await lease.release(() => T0 + 100);
    expect(committer.releases[0]!.final).toBe(T0 + 5);
  });

  it('after revoke refuses with the reason', async () => {
    const { lease } = setup();
    await lease.extend();
    lease.revoke('ZooKeeper assigns another worker ID to this identity');
    expect(lease.issuableUntil).toBe(Number.NEGATIVE_INFINITY);
    await expect(lease.cover(T0)).rejects.toThrow(/another worker ID/);
    await expect(lease.extend()).rejects.toBeInstanceOf(TimeLeaseUnavailableError);
    expect(lease.snapshot().revoked).toContain('another worker ID');
  });
});
