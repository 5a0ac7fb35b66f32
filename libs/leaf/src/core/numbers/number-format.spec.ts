import { InvalidArgumentError } from '../errors/invalid-argument.error';
import {
  checkNewNumberFormat,
  checkNumberFormatUpdate,
  counterTag,
  formatUnit,
  type NewNumberFormat,
} from './number-format';

const orders: NewNumberFormat = {
  tag: 'orders',
  prefix: 'ORD',
  datePattern: 'yyyyMMdd',
  timeZone: 'Asia/Shanghai',
  width: 6,
};

function refusal(input: unknown): string {
  try {
    checkNewNumberFormat(input as NewNumberFormat);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return (error as InvalidArgumentError).argument;
  }
  throw new Error('accepted');
}

describe('checkNewNumberFormat', () => {
  it('fills the defaults: segment, "-", the date part\'s reset', () => {
    expect(checkNewNumberFormat(orders)).toEqual({
      tag: 'orders',
      mode: 'segment',
      prefix: 'ORD',
      separator: '-',
      datePattern: 'yyyyMMdd',
      timeZone: 'Asia/Shanghai',
      width: 6,
      reset: 'day',
      description: null,
    });
    expect(checkNewNumberFormat({ tag: 'pr', width: 6 })).toMatchObject({
      datePattern: null,
      reset: 'none',
      timeZone: 'UTC',
    });
  });

  it('names the time zone as Intl does', () => {
    expect(checkNewNumberFormat({ ...orders, timeZone: 'utc' }).timeZone).toBe('UTC');
  });

  it('refuses what could print one number twice or is malformed', () => {
    expect(refusal({ ...orders, reset: 'day', datePattern: 'yyyyMM' })).toBe('datePattern');
    expect(refusal({ ...orders, reset: 'month', datePattern: null })).toBe('datePattern');
    expect(refusal({ ...orders, tag: 'orders:20261204' })).toBe('tag');
    expect(refusal({ ...orders, tag: 'x'.repeat(120) })).toBe('tag');
    expect(refusal({ ...orders, tag: 'bad tag' })).toBe('key');
    expect(refusal({ ...orders, width: 0 })).toBe('width');
    expect(refusal({ ...orders, width: 20 })).toBe('width');
    expect(refusal({ ...orders, width: 6.5 })).toBe('width');
    expect(refusal({ ...orders, timeZone: 'Mars/Olympus' })).toBe('timeZone');
    expect(refusal({ ...orders, prefix: 'ORD ' })).toBe('prefix');
    expect(refusal({ ...orders, prefix: 'P'.repeat(33) })).toBe('prefix');
    expect(refusal({ ...orders, separator: '+' })).toBe('separator');
    expect(refusal({ ...orders, mode: 'snowflake' })).toBe('mode');
    expect(refusal({ ...orders, reset: 'week' })).toBe('reset');
    expect(refusal({ ...orders, datePattern: 'yyMMdd' })).toBe('datePattern');
    expect(refusal({ ...orders, description: 'd'.repeat(257) })).toBe('description');
    expect(refusal({ ...orders, description: 'a\u0000b' })).toBe('description');
    expect(refusal({ ...orders, description: 'a\ud800' })).toBe('description');
    expect(refusal({ ...orders, width: '6' as unknown as number })).toBe('width');
  });

  it('takes IANA zone names only, never an offset (docs/formats.md)', () => {
    for (const timeZone of ['+05:00', '-03', '+0530', 'GMT+05:00 ', ' UTC', '']) {
      expect(refusal({ ...orders, timeZone })).toBe('timeZone');
    }
    expect(checkNewNumberFormat({ ...orders, timeZone: 'Etc/GMT+5' }).timeZone).toBe('Etc/GMT+5');
    expect(checkNewNumberFormat({ ...orders, timeZone: 'Europe/Paris' }).timeZone).toBe(
      'Europe/Paris',
    );
  });

  it('allows a date part finer than the reset, and a date without a reset', () => {
    expect(checkNewNumberFormat({ ...orders, reset: 'month' }).reset).toBe('month');
    expect(checkNewNumberFormat({ ...orders, reset: 'none' }).reset).toBe('none');
    expect(checkNewNumberFormat({ ...orders, datePattern: 'yyyy', reset: 'year' }).reset).toBe(
      'year',
    );
  });
});

describe('counterTag and formatUnit', () => {
  it('names one row per reset period; the base tag without a reset', () => {
    const daily = checkNewNumberFormat(orders);
    expect(counterTag(daily, '20261204')).toBe('orders:20261204');
    expect(formatUnit(daily)).toBe('day');
    const monthly = checkNewNumberFormat({ ...orders, reset: 'month' });
    expect(counterTag(monthly, '20261204')).toBe('orders:202612');
    expect(formatUnit(monthly)).toBe('day');
    const plain = checkNewNumberFormat({ tag: 'pr', width: 6 });
    expect(counterTag(plain, '')).toBe('pr');
    expect(formatUnit(plain)).toBeNull();
  });
});

describe('checkNumberFormatUpdate', () => {
  const current = checkNewNumberFormat(orders);

  it('lets the width grow and the description change', () => {
    expect(checkNumberFormatUpdate(current, { width: 8 }).width).toBe(8);
    expect(checkNumberFormatUpdate(current, { description: 'x' }).description).toBe('x');
  });

  it('refuses a width that shrinks, and an empty change', () => {
    expect(() => checkNumberFormatUpdate(current, { width: 5 })).toThrow(InvalidArgumentError);
    expect(() => checkNumberFormatUpdate(current, {})).toThrow(InvalidArgumentError);
  });
});
