import { AllocationError, IdOverflowError } from '../errors/allocation.error';
import { LeafErrorCode } from '../errors/leaf.error';
import { advanceMaxId } from './allocation-rule';
import { MAX_INT64 } from './leaf-alloc-store.port';
import { thrownBy } from '../../testing/test-helpers';

describe('advanceMaxId', () => {
  it('adds the step to max_id, exactly beyond 2^53', () => {
    expect(advanceMaxId('t', 1n, 2000)).toBe(2001n);
    expect(advanceMaxId('t', (1n << 60n) + 7n, 3)).toBe((1n << 60n) + 10n);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])(
    'refuses the step %p with AllocationError (LEAF_ALLOCATION_FAILED)',
    (step) => {
      const error = thrownBy(() => advanceMaxId('bad-step', 10n, step));
      expect(error).toBeInstanceOf(AllocationError);
      expect(error).not.toBeInstanceOf(IdOverflowError);
      expect((error as AllocationError).code).toBe(LeafErrorCode.ALLOCATION_FAILED);
      expect((error as AllocationError).tag).toBe('bad-step');
    },
  );

  it('reaches 2^63-1 exactly and refuses to pass it with IdOverflowError', () => {
    expect(advanceMaxId('t', MAX_INT64 - 7n, 7)).toBe(MAX_INT64);
    const error = thrownBy(() => advanceMaxId('near-max', MAX_INT64 - 7n, 8));
    expect(error).toBeInstanceOf(IdOverflowError);
    expect(error).toMatchObject({
      code: LeafErrorCode.ID_OVERFLOW,
      tag: 'near-max',
      maxId: MAX_INT64 - 7n,
      step: 8,
    });
    expect(thrownBy(() => advanceMaxId('t', MAX_INT64, 1))).toBeInstanceOf(IdOverflowError);
  });

  it('checks the step before the overflow', () => {
    expect(thrownBy(() => advanceMaxId('t', MAX_INT64, 0))).not.toBeInstanceOf(IdOverflowError);
  });
});
