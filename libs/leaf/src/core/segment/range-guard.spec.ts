import { AllocationRegressedError } from '../errors/allocation.error';
import { LeafErrorCode } from '../errors/leaf.error';
import { RangeGuard } from './range-guard';

const range = (maxId: bigint, step: number, tag = 't') => ({
  tag,
  maxId,
  appliedStep: step,
  baseStep: step,
});

describe('RangeGuard', () => {
  it('accepts increasing ranges, also when loads finish out of order', () => {
    const guard = new RangeGuard();
    guard.admit(range(101n, 100), guard.floor('t')); // [1, 101)
    const floorA = guard.floor('t');
    const floorB = guard.floor('t');
    guard.admit(range(301n, 100), floorB); // [201, 301) finished first
    expect(() => guard.admit(range(201n, 100), floorA)).not.toThrow(); // [101, 201)
    expect(guard.floor('t')?.get(-1)).toBe(301n);
  });

  it('refuses a range below what it holds (max_id lowered by hand) with a typed error', () => {
    const guard = new RangeGuard();
    guard.admit(range(10_001n, 10_000), null); // [1, 10001)
    let error: unknown;
    try {
      guard.admit(range(6_001n, 1_000), guard.floor('t')); // max_id lowered by 5,000
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AllocationRegressedError);
    expect(error).toMatchObject({
      code: LeafErrorCode.ALLOCATION_REGRESSED,
      tag: 't',
      start: 5_001n,
      end: 6_001n,
      heldUpTo: 10_001n,
    });
    // Refused ranges are not remembered; once max_id passes the held ones, ranges are accepted.
    expect(guard.floor('t')?.get(-1)).toBe(10_001n);
    expect(() => guard.admit(range(11_001n, 1_000), guard.floor('t'))).not.toThrow();
  });

  it('refuses a range overlapping one granted while it was in flight', () => {
    const guard = new RangeGuard();
    guard.admit(range(101n, 100), null);
    const floor = guard.floor('t'); // 101
    guard.admit(range(201n, 100), guard.floor('t')); // [101, 201)
    // max_id lowered to 101 meanwhile: the in-flight load gets [101, 201) again.
    expect(() => guard.admit(range(201n, 100), floor)).toThrow(AllocationRegressedError);
  });

  it('keeps tags apart', () => {
    const guard = new RangeGuard();
    guard.admit(range(1_001n, 1_000, 'a'), null);
    expect(guard.floor('b')).toBeNull();
    expect(() => guard.admit(range(11n, 10, 'b'), guard.floor('b'))).not.toThrow();
  });

  it('compares a range only with the ranges of the database that granted it', () => {
    const guard = new RangeGuard();
    guard.admit({ ...range(20_001n, 10_000), source: 0 }, null); // database 0: [10001, 20001)
    // Database 1 is far behind in ID space: its own class, not a regression.
    expect(() =>
      guard.admit({ ...range(1_001n, 1_000), source: 1 }, guard.floor('t')),
    ).not.toThrow();
    // Database 0 going back is still refused.
    expect(() => guard.admit({ ...range(15_001n, 1_000), source: 0 }, guard.floor('t'))).toThrow(
      AllocationRegressedError,
    );
    expect(guard.floor('t')?.get(1)).toBe(1_001n);
  });
});
