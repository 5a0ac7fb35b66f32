import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { NumberOverflowError } from '../errors/number-format.error';
import { checkNewNumberFormat, type NewNumberFormat } from './number-format';
import { decodeNumber, NumberPrinter } from './number-text';

const format = (input: Partial<NewNumberFormat>) =>
  checkNewNumberFormat({ tag: 'orders', width: 6, ...input });

describe('NumberPrinter', () => {
  it('prints prefix, date and the zero-padded counter', () => {
    const printer = new NumberPrinter(format({ prefix: 'ORD', datePattern: 'yyyyMMdd' }));
    const head = printer.head('20261204');
    expect(head).toBe('ORD-20261204-');
    expect(printer.print(head, '20261204', 123n)).toBe('ORD-20261204-000123');
    expect(printer.print(head, '20261204', 999_999n)).toBe('ORD-20261204-999999');
  });

  it('leaves empty parts out', () => {
    expect(new NumberPrinter(format({ prefix: 'PR', separator: '' })).head('')).toBe('PR');
    expect(new NumberPrinter(format({ datePattern: 'yyyyMM' })).head('202612')).toBe('202612-');
    expect(new NumberPrinter(format({})).head('')).toBe('');
  });

  it('never prints a counter wider than the width', () => {
    const printer = new NumberPrinter(format({ prefix: 'ORD', datePattern: 'yyyy', width: 3 }));
    expect(printer.print('ORD-2026-', '2026', 999n)).toBe('ORD-2026-999');
    let error: unknown;
    try {
      printer.print('ORD-2026-', '2026', 1000n);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(NumberOverflowError);
    expect(error).toMatchObject({ code: 'LEAF_NUMBER_OVERFLOW', counter: 1000n, width: 3 });
  });

  it('prints every counter of every width exactly, thousands cached or not', () => {
    for (let width = 1; width <= 19; width++) {
      const printer = new NumberPrinter(format({ prefix: 'P', width }));
      const limit = 10n ** BigInt(width);
      const counters = [
        0n,
        1n,
        9n,
        10n,
        999n,
        1000n,
        1001n,
        123_456n,
        limit - 1000n,
        limit - 1n,
      ].filter((c) => c >= 0n && c < limit);
      for (const head of ['P-', 'Q-', 'P-']) {
        for (const counter of counters) {
          expect(printer.print(head, '', counter)).toBe(
            head + counter.toString().padStart(width, '0'),
          );
        }
      }
    }
  });

  it('takes 19 digits, every max_id', () => {
    const printer = new NumberPrinter(format({ width: 19 }));
    expect(printer.print('', '', (1n << 63n) - 1n)).toBe('9223372036854775807');
  });
});

describe('decodeNumber', () => {
  it('reads period and counter back', () => {
    const daily = format({ prefix: 'ORD', datePattern: 'yyyyMMdd' });
    expect(decodeNumber(daily, 'ORD-20261204-000123')).toEqual({
      tag: 'orders',
      mode: 'segment',
      period: '20261204',
      counterTag: 'orders:20261204',
      counter: 123n,
    });
    const monthly = format({
      prefix: 'INV',
      datePattern: 'yyyyMMdd',
      reset: 'month',
      separator: '',
    });
    expect(decodeNumber(monthly, 'INV20261204000007')).toMatchObject({
      period: '20261204',
      counterTag: 'orders:202612',
      counter: 7n,
    });
    expect(decodeNumber(format({ prefix: 'PR', separator: '' }), 'PR000001')).toMatchObject({
      period: null,
      counterTag: 'orders',
      counter: 1n,
    });
  });

  it('round-trips every printed number', () => {
    for (const input of [
      { prefix: 'A', datePattern: 'yyyyMMdd' as const, separator: '' },
      { prefix: '', datePattern: 'yyyy' as const },
      { prefix: 'X-1', separator: '/' },
    ]) {
      const f = format(input);
      const printer = new NumberPrinter(f);
      const period = f.datePattern === 'yyyyMMdd' ? '20261204' : f.datePattern ? '2026' : '';
      for (const counter of [1n, 42n, 999_999n]) {
        const text = printer.print(printer.head(period), period, counter);
        expect(decodeNumber(f, text).counter).toBe(counter);
      }
    }
  });

  it('refuses a counter of 0: counters start at 1, so none was ever issued', () => {
    const f = format({ prefix: 'SN' });
    expect(() => decodeNumber(f, 'SN-000000')).toThrow(InvalidArgumentError);
  });

  it('refuses texts of another format', () => {
    const daily = format({ prefix: 'ORD', datePattern: 'yyyyMMdd' });
    for (const text of [
      'ORD-20261204-00012',
      'ORD-20261204-0000123',
      'INV-20261204-000123',
      'ORD-2026124-000123',
      'ORD-20261204_000123',
      'ORD-20261204-00012a',
      '',
    ]) {
      expect(() => decodeNumber(daily, text)).toThrow(InvalidArgumentError);
    }
  });
});
