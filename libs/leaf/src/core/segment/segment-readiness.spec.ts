import { AllocationError } from '../errors/allocation.error';
import { segmentReadiness } from './segment-readiness';

describe('segmentReadiness: the last allocation error as readiness shows it', () => {
  const input = (lastAllocationError: unknown) => ({
    closing: false,
    initialized: true,
    tags: [],
    lastAllocationError,
    databases: null,
  });

  it("never carries a driver's words, which readiness would show to anyone", () => {
    const driver = new Error('invalid byte sequence for encoding "UTF8": 0x00 at 10.1.2.3');
    const wrapped = new AllocationError('order', `Allocation failed: ${driver.message}`, {
      cause: driver,
    });
    for (const error of [wrapped, driver]) {
      const shown = segmentReadiness(input(error), 0).lastAllocationError!;
      expect(shown).not.toMatch(/UTF8|10\.1\.2\.3/);
      expect(shown).toMatch(/server log/);
    }
  });

  it("keeps a Leaf error's own message", () => {
    const error = new AllocationError('order', 'max_id of "order" would overflow');
    expect(segmentReadiness(input(error), 0).lastAllocationError).toBe(
      'AllocationError: max_id of "order" would overflow',
    );
    expect(segmentReadiness(input(null), 0).lastAllocationError).toBeNull();
  });
});
