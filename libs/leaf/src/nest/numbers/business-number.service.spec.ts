import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { InvalidArgumentError } from '../../core/errors/invalid-argument.error';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { ModeDisabledError } from '../../core/errors/mode-disabled.error';
import {
  NumberFormatExistsError,
  NumberFormatNotFoundError,
} from '../../core/errors/number-format.error';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import { InMemoryAllocStore } from '../../testing/in-memory-alloc.store';
import { InMemoryNumberFormatStore } from '../../testing/in-memory-number-format.store';
import { LeafModule } from '../leaf.module';
import { LEAF_NUMBER_FORMAT_STORE } from '../leaf.constants';
import { resolveLeafOptions } from '../leaf-options.resolver';
import type { SequenceService } from '../sequence/sequence.service';
import { BusinessNumberService } from './business-number.service';

async function boot(store: InMemoryAllocStore, formats: InMemoryNumberFormatStore | null) {
  const builder = Test.createTestingModule({
    imports: [ScheduleModule.forRoot(), LeafModule.forRoot({ segment: { store } })],
  });
  if (formats) builder.overrideProvider(LEAF_NUMBER_FORMAT_STORE).useValue(formats);
  return (await builder.compile()).init();
}

describe('BusinessNumberService (module wiring)', () => {
  it('defines a format on an existing tag and serves its numbers through segment mode', async () => {
    const store = new InMemoryAllocStore().setTag('orders', 100);
    const formats = new InMemoryNumberFormatStore().setNow(Date.parse('2026-12-04T10:00:00Z'));
    const app = await boot(store, formats);
    try {
      const numbers = app.get(BusinessNumberService);
      const format = await numbers.defineFormat({
        tag: 'orders',
        prefix: 'ORD',
        datePattern: 'yyyyMMdd',
        timeZone: 'Asia/Shanghai',
        width: 6,
      });
      expect(format).toMatchObject({ reset: 'day', mode: 'segment' });
      expect(await numbers.next('orders')).toBe('ORD-20261204-000001');
      expect(await numbers.nextBatch('orders', 2)).toEqual([
        'ORD-20261204-000002',
        'ORD-20261204-000003',
      ]);
      expect(await numbers.nextOf('segment', 'orders')).toBe('ORD-20261204-000004');
      await expect(numbers.nextOf('sequence', 'orders')).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      // The period's counter is its own row, with the base tag's step.
      expect(await store.findTag('orders:20261204')).toMatchObject({ step: 100 });
      expect(await numbers.decode('orders', 'ORD-20261204-000004')).toMatchObject({
        counter: 4n,
        period: '20261204',
      });
      expect(await numbers.currentPeriod('orders')).toEqual({
        key: '20261204',
        counterTag: 'orders:20261204',
      });

      await expect(numbers.defineFormat({ tag: 'orders', width: 4 })).rejects.toBeInstanceOf(
        NumberFormatExistsError,
      );
      await expect(numbers.defineFormat({ tag: 'missing', width: 4 })).rejects.toBeInstanceOf(
        TagNotFoundError,
      );
      expect((await numbers.updateFormat('orders', { width: 8 })).width).toBe(8);
      expect(await numbers.next('orders')).toBe('ORD-20261204-00000005');
      await expect(numbers.updateFormat('orders', { width: 7 })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      await expect(numbers.getFormat('nope')).rejects.toBeInstanceOf(NumberFormatNotFoundError);
      expect((await numbers.listFormats()).map((f) => f.tag)).toEqual(['orders']);
    } finally {
      await app.close();
    }
  });

  it('answers ModeDisabledError for a sequence format with sequence mode off', async () => {
    const store = new InMemoryAllocStore().setTag('ledger', 10);
    const app = await boot(store, new InMemoryNumberFormatStore());
    try {
      const numbers = app.get(BusinessNumberService);
      await numbers.defineFormat({ tag: 'ledger', mode: 'sequence', prefix: 'L', width: 9 });
      await expect(numbers.next('ledger')).rejects.toBeInstanceOf(ModeDisabledError);
    } finally {
      await app.close();
    }
  });

  it('answers a configuration error without a single dataSource', async () => {
    const app = await boot(new InMemoryAllocStore(), null);
    try {
      const numbers = app.get(BusinessNumberService);
      await expect(numbers.next('orders')).rejects.toBeInstanceOf(LeafConfigurationError);
      await expect(numbers.listFormats()).rejects.toBeInstanceOf(LeafConfigurationError);
    } finally {
      await app.close();
    }
  });
});

describe('BusinessNumberService without segment mode’s service', () => {
  it('serves a sequence format from SequenceService alone; a segment format is ModeDisabledError', async () => {
    const store = new InMemoryAllocStore().setTag('ledger', 10).setTag('orders', 10);
    const formats = new InMemoryNumberFormatStore().setNow(Date.parse('2026-12-04T10:00:00Z'));
    let last = 0n;
    const taken: string[] = [];
    const sequence = {
      get: (tag: string) => (taken.push(tag), Promise.resolve(++last)),
      getIds: (tag: string, count: number) => {
        taken.push(tag);
        return Promise.resolve(Array.from({ length: count }, () => ++last));
      },
    } as unknown as SequenceService;
    const numbers = new BusinessNumberService(
      resolveLeafOptions({ segment: { store } }),
      store,
      formats,
      undefined,
      sequence,
    );
    await numbers.defineFormat({ tag: 'ledger', mode: 'sequence', prefix: 'L', width: 6 });
    expect(await numbers.next('ledger')).toBe('L-000001');
    expect(await numbers.nextBatchOf('sequence', 'ledger', 2)).toEqual(['L-000002', 'L-000003']);
    expect(taken).toEqual(['ledger', 'ledger']);

    await numbers.defineFormat({ tag: 'orders', prefix: 'ORD', width: 6 });
    await expect(numbers.next('orders')).rejects.toMatchObject({
      code: 'LEAF_MODE_DISABLED',
      mode: 'segment',
    });
  });
});
