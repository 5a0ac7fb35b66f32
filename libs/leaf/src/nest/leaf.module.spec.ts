import { Test } from '@nestjs/testing';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { ModeDisabledError } from '../core/errors/mode-disabled.error';
import { SegmentNotReadyError } from '../core/errors/segment-not-ready.error';
import { TagNotFoundError } from '../core/errors/tag-not-found.error';
import { InvalidArgumentError } from '../core/errors/invalid-argument.error';
import { IdService, type LeafMode } from '../core/id.service';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import type { LeafModuleOptions } from './leaf-options.interface';
import { SegmentAdminService } from './segment/segment-admin.service';
import { LeafModule } from './leaf.module';
import { SegmentService } from './segment/segment.service';
import { InMemoryAllocStore } from '../testing/in-memory-alloc.store';

async function boot(store: InMemoryAllocStore, name = 'leaf', warmTags: string[] = []) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      LeafModule.forRootAsync({
        useFactory: async () => ({
          name,
          segment: { store, warmTags, refreshIntervalMs: 20 },
          snowflake: false,
        }),
      }),
    ],
  }).compile();
  return moduleRef.init();
}

describe('LeafModule (segment wiring)', () => {
  it('serves IDs through SegmentService, the per-tag handle and IdService', async () => {
    const store = new InMemoryAllocStore().setTag('order', 100);
    const app = await boot(store, 'leaf', ['order']);
    try {
      const segments = app.get(SegmentService);
      expect(segments.getSync('order')).toBe(1n); // warmed at start
      const handle = segments.generator('order');
      expect(handle.next()).toBe(2n);
      await expect(app.get(IdService).get('segment', 'order')).resolves.toBe(3n);
      await expect(segments.getIds('order', 3)).resolves.toEqual([4n, 5n, 6n]);
      await expect(segments.getRange('order', 10)).resolves.toEqual({ start: 7n, end: 17n });
      // A range larger than what the segment has left comes straight from the store.
      const big = await segments.getRange('order', 1000);
      expect(big.end - big.start).toBe(1000n);
      expect(big.start).toBeGreaterThanOrEqual(101n);
      // An unknown key on a sync call starts a database look-up (not ready yet); once the
      // database said no, the negative cache answers TagNotFoundError.
      expect(() => segments.getSync('nope')).toThrow(SegmentNotReadyError);
      await expect(segments.get('nope')).rejects.toBeInstanceOf(TagNotFoundError);
      expect(() => segments.getSync('nope')).toThrow(TagNotFoundError);
      expect(() => segments.getSync('bad key')).toThrow(InvalidArgumentError);
      await expect(segments.getIds('order', 0)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(segments.getIds('order', 1001)).rejects.toBeInstanceOf(InvalidArgumentError);
    } finally {
      await app.close();
    }
  });

  it('throws not-ready from the sync calls on a cold tag and starts its load', async () => {
    const store = new InMemoryAllocStore().setTag('cold', 10);
    const app = await boot(store);
    try {
      const segments = app.get(SegmentService);
      expect(() => segments.getSync('cold')).toThrow(SegmentNotReadyError);
      expect(store.calls).toHaveLength(1);
      await expect(segments.get('cold')).resolves.toBe(1n);
    } finally {
      await app.close();
    }
  });

  it('refreshes the tag list on its schedule, under a namespaced job name', async () => {
    const store = new InMemoryAllocStore().setTag('a', 10);
    const app = await boot(store, 'ns1');
    try {
      expect(app.get(SchedulerRegistry).getIntervals()).toContain('leaf:ns1:segment:refresh');
      const segments = app.get(SegmentService);
      store.setTag('b', 10);
      store.deleteTag('a');
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(segments.tags()).toEqual(['b']);
      await expect(segments.get('a')).rejects.toBeInstanceOf(TagNotFoundError);
      store.deleteTag('b');
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(segments.tags()).toEqual([]);
    } finally {
      await app.close();
    }
    expect(app.get(SchedulerRegistry).getIntervals()).toEqual([]);
  });

  it('waits at shutdown for a direct range allocation in flight', async () => {
    const store = new InMemoryAllocStore().setTag('t', 10);
    const app = await boot(store, 'leaf', ['t']);
    store.hold();
    const range = app.get(SegmentService).getRange('t', 500);
    let closed = false;
    const closing = app.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    store.release();
    await closing;
    await expect(range).resolves.toEqual({ start: 11n, end: 511n });
  });

  it('keeps two applications in one process apart', async () => {
    const storeA = new InMemoryAllocStore().setTag('t', 10);
    const storeB = new InMemoryAllocStore().setTag('t', 10, 1000n);
    const [a, b] = await Promise.all([boot(storeA), boot(storeB)]);
    try {
      await expect(a.get(SegmentService).get('t')).resolves.toBe(1n);
      await expect(b.get(SegmentService).get('t')).resolves.toBe(1000n);
      await a.close();
      await expect(b.get(SegmentService).get('t')).resolves.toBe(1001n);
    } finally {
      await b.close();
    }
  });

  it('registers nothing of segment mode when it is off: IdService answers ModeDisabled, no job runs', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), LeafModule.forRoot({ segment: false, snowflake: false })],
    }).compile();
    const app = await moduleRef.init();
    try {
      expect(() => app.get(SegmentService)).toThrow(/SegmentService/);
      expect(() => app.get(SegmentAdminService)).toThrow(/SegmentAdminService/);
      await expect(app.get(IdService).get('segment', 't')).rejects.toBeInstanceOf(
        ModeDisabledError,
      );
      expect(app.get(SchedulerRegistry).getIntervals()).toEqual([]);
    } finally {
      await app.close();
    }
  });
});

describe('LeafModule.forRootAsync modes', () => {
  async function bootAsync(modes: readonly LeafMode[] | undefined, options: LeafModuleOptions) {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        LeafModule.forRootAsync({ ...(modes ? { modes } : {}), useFactory: () => options }),
      ],
    }).compile();
    return moduleRef.init();
  }

  it('registers segment alone by default, and the listed modes otherwise', async () => {
    const store = new InMemoryAllocStore().setTag('t', 10);
    const app = await bootAsync(undefined, { segment: { store } });
    try {
      await expect(app.get(SegmentService).get('t')).resolves.toBe(1n);
    } finally {
      await app.close();
    }
  });

  it('refuses options that switch on a mode the module did not register, naming both lists', async () => {
    const store = new InMemoryAllocStore().setTag('t', 10);
    const error = await bootAsync(undefined, {
      segment: { store },
      snowflake: { workerId: 1, stateDir: '/nonexistent' },
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LeafConfigurationError);
    expect(String(error)).toContain(
      "registered ['segment'] but the options switch on ['segment', 'snowflake']",
    );
  });

  it('refuses a listed mode the options leave off', async () => {
    const error = await bootAsync(['segment', 'snowflake'], { segment: false }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LeafConfigurationError);
    expect(String(error)).toContain(
      "registered ['segment', 'snowflake'] but the options switch on none",
    );
  });

  it('refuses an unknown mode before anything is built', () => {
    expect(() =>
      LeafModule.forRootAsync({ modes: ['segmnet' as LeafMode], useFactory: () => ({}) }),
    ).toThrow(/"segmnet" is not a mode/);
  });
});
