import { Test } from '@nestjs/testing';
import { ScheduleModule } from '@nestjs/schedule';
import { AllocationError } from '../../core/errors/allocation.error';
import { SegmentNotInitializedError } from '../../core/errors/segment-not-initialized.error';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import { eventually } from '../../testing/eventually';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { LeafModule } from '../leaf.module';
import { SegmentService } from './segment.service';

async function boot(store: InMemoryAllocStore, warmTags: string[] = []) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      LeafModule.forRoot({ segment: { store, warmTags }, snowflake: false }),
    ],
  }).compile();
  return moduleRef.init();
}

describe('SegmentService: modes start and fail independently', () => {
  it('starts with the database down, answers NOT_INITIALIZED, then joins and warms by itself', async () => {
    const store = new InMemoryAllocStore().setTag('order', 100);
    const listTags = jest
      .spyOn(store, 'listTags')
      .mockRejectedValue(new AllocationError('*', 'connect ECONNREFUSED'));
    const app = await boot(store, ['order']);
    try {
      const segments = app.get(SegmentService);
      expect(segments.initialized).toBe(false);
      await expect(segments.get('order')).rejects.toBeInstanceOf(SegmentNotInitializedError);
      expect(segments.readiness()).toMatchObject({ ready: false, reason: 'tag list not loaded' });
      const failedAttempts = listTags.mock.calls.length;
      await eventually(
        () => expect(listTags.mock.calls.length).toBeGreaterThan(failedAttempts),
        3000,
      );

      listTags.mockRestore(); // the database answers
      await eventually(() => expect(segments.initialized).toBe(true), 5000);
      // Warmed when it joined: the first ID is in memory.
      await eventually(() => expect(segments.getSync('order')).toBe(1n), 2000);
      expect(segments.readiness().ready).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('a warm tag missing from the table still fails start-up', async () => {
    const store = new InMemoryAllocStore().setTag('order', 100);
    await expect(boot(store, ['missing'])).rejects.toBeInstanceOf(TagNotFoundError);
  });

  it('hands back at close and reports "shutting down" from the first shutdown hook', async () => {
    const store = new InMemoryAllocStore().setTag('order', 100);
    const app = await boot(store);
    const segments = app.get(SegmentService);
    await segments.getIds('order', 3);
    await app.close();
    expect(segments.readiness()).toMatchObject({ ready: false, reason: 'shutting down' });
    expect(store.maxId('order')).toBe(4n);
    expect(segments.lastHandBack).toEqual([
      { tag: 'order', maxId: 101n, firstUnused: 4n, handedBack: true },
    ]);
  });

  it('keeps the gap with handBackOnClose: false', async () => {
    const store = new InMemoryAllocStore().setTag('order', 100);
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        LeafModule.forRoot({ segment: { store, handBackOnClose: false }, snowflake: false }),
      ],
    }).compile();
    const app = await moduleRef.init();
    await app.get(SegmentService).getIds('order', 3);
    await app.close();
    expect(store.maxId('order')).toBe(101n);
    expect(store.handBacks).toEqual([]);
  });
});
