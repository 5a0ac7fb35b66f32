import { Test } from '@nestjs/testing';
import { ScheduleModule } from '@nestjs/schedule';
import { Registry } from 'prom-client';
import { SegmentNotReadyError } from '../../core/errors/segment-not-ready.error';
import { LeafModule } from '../leaf.module';
import { SegmentService } from '../segment/segment.service';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { LeafMetricsCollector } from './leaf-metrics.collector';

/** The value of the sample `series` (name and labels as printed) in `text`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('LeafMetricsCollector in a user-owned prom-client Registry', () => {
  it('reports snapshots at collect time and load latency, only in that registry', async () => {
    const store = new InMemoryAllocStore().setTag('order', 100).setTag('cold', 10);
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        LeafModule.forRoot({ segment: { store, warmTags: ['order'] }, snowflake: false }),
      ],
    }).compile();
    // A user's own registry, registered before init so the warm-up load is observed.
    const registry = new Registry();
    const unregister = moduleRef.get(LeafMetricsCollector).register(registry);
    const app = await moduleRef.init();
    try {
      const segments = app.get(SegmentService);
      for (let i = 0; i < 5; i++) segments.getSync('order');
      expect(() => segments.getSync('cold')).toThrow(SegmentNotReadyError);

      const text = await registry.metrics();
      expect(sample(text, 'leaf_ids_issued_total{mode="segment",tag="order"}')).toBe(5);
      expect(sample(text, 'leaf_ids_issued_total{mode="segment",tag="cold"}')).toBe(0);
      expect(sample(text, 'leaf_segment_loads_total{tag="order"}')).toBe(1);
      expect(sample(text, 'leaf_segment_current_idle{tag="order"}')).toBe(95);
      expect(sample(text, 'leaf_not_ready_total{mode="segment"}')).toBe(1);
      expect(
        sample(text, 'leaf_segment_load_duration_seconds_count{tag="order",outcome="ok"}'),
      ).toBe(1);
      // Snowflake is off: none of its series, and nothing in prom-client's global registry.
      expect(text).not.toMatch(/^leaf_snowflake_ready /m);
      expect(text).not.toMatch(/^leaf_ids_issued_total\{mode="snowflake"/m);
      const { register: global } = await import('prom-client');
      expect(global.getSingleMetric('leaf_ids_issued_total')).toBeUndefined();

      // Issued counts follow the buffers, read at the next scrape.
      await segments.getIds('order', 10);
      expect(
        sample(await registry.metrics(), 'leaf_ids_issued_total{mode="segment",tag="order"}'),
      ).toBe(15);

      unregister();
      expect(await registry.metrics()).not.toContain('leaf_');
    } finally {
      await app.close();
    }
  });
});
