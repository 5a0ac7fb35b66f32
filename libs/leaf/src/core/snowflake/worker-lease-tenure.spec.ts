import { tenureAt, type WorkerLeaseJournalRow } from './worker-lease-store.port';

const claim = (
  epoch: number,
  afterMs: number | null,
  holder = `h${epoch}`,
): WorkerLeaseJournalRow => ({
  workerId: 3,
  epoch: BigInt(epoch),
  holder,
  run: `r${epoch}`,
  instance: holder,
  claimedAt: 1_000 * epoch,
  afterMs,
});

describe('tenureAt (who held a worker ID in a millisecond)', () => {
  const claims = [claim(1, null), claim(2, 500), claim(3, 900), claim(4, 900), claim(5, 2_000)];

  it('the first holder of a new row holds everything up to its successor’s start bound', () => {
    expect(tenureAt(claims, 1)).toEqual({ claim: claims[0], untilMs: 500 });
    expect(tenureAt(claims, 500)).toEqual({ claim: claims[0], untilMs: 500 });
  });

  it('a later holder from the millisecond after its predecessor’s horizon', () => {
    expect(tenureAt(claims, 501)?.claim.epoch).toBe(2n);
    expect(tenureAt(claims, 900)).toEqual({ claim: claims[1], untilMs: 900 });
  });

  it('skips a holder that issued nothing (its successor’s bound equals its own)', () => {
    expect(tenureAt(claims, 901)).toEqual({ claim: claims[3], untilMs: 2_000 });
  });

  it('the newest holder has no end yet', () => {
    expect(tenureAt(claims, 5_000)).toEqual({ claim: claims[4], untilMs: null });
  });

  it('nothing before the first journalled claim that had a predecessor', () => {
    const late = [claim(7, 1_000), claim(8, 2_000)];
    expect(tenureAt(late, 1_000)).toBeNull();
    expect(tenureAt(late, 1_001)?.claim.epoch).toBe(7n);
    expect(tenureAt([], 1)).toBeNull();
  });
});
