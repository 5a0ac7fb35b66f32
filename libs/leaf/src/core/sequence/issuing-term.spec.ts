import { TagNotFoundError } from '../errors/tag-not-found.error';
import { FakeClock } from '../../testing/fake-clock';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { sequenceTestBuffer } from '../../testing/test-helpers';
import { IssuingTerm } from './issuing-term';

const buffer = sequenceTestBuffer;

describe('IssuingTerm: keys nobody created', () => {
  it('keeps no buffer for them, and refuses one again for 5 s without a transaction', async () => {
    const store = new InMemoryAllocStore().setTag('k', 10);
    let loads = 0;
    let mono = 0;
    const clock = new FakeClock();
    const term = new IssuingTerm(
      (tag, step) => {
        loads++;
        return store.allocate(tag, step);
      },
      { group: 0, leaseMarginMs: 100, buffer, resignAfterFailingMs: 60_000 },
      clock,
      () => mono,
      null,
    );
    term.elect(1, 0, null);
    term.confirm(0, 1_000_000, clock.now());
    expect(await term.issue('k', 2)).toEqual({ start: 1n, end: 3n });
    for (let i = 0; i < 1000; i++) {
      await expect(term.issue(`unknown-${i}`, 1)).rejects.toBeInstanceOf(TagNotFoundError);
    }
    const buffers = (term as unknown as { buffers: Map<string, unknown> }).buffers;
    expect([...buffers.keys()]).toEqual(['k']);
    const before = loads;
    await expect(term.issue('unknown-1', 1)).rejects.toBeInstanceOf(TagNotFoundError);
    expect(loads).toBe(before);
    mono += 5001;
    store.setTag('unknown-1', 10);
    expect(await term.issue('unknown-1', 1)).toEqual({ start: 1n, end: 2n });
    expect(loads).toBeGreaterThan(before);
  });
});
