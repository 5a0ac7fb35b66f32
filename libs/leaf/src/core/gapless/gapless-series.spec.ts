import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { checkNewGaplessSeries, GaplessSeriesCalendar } from './gapless-series';

describe('checkNewGaplessSeries', () => {
  it('fills the defaults', () => {
    expect(checkNewGaplessSeries({ name: 'inv' })).toEqual({
      name: 'inv',
      prefix: '',
      width: 6,
      period: 'none',
      timeZone: 'UTC',
      externalCode: null,
      correctionsOf: null,
    });
  });

  it('refuses a daily period with the reason, and every malformed field', () => {
    const refused = (raw: object, argument: string) => {
      try {
        checkNewGaplessSeries({ name: 'inv', ...raw });
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as InvalidArgumentError).argument).toBe(argument);
        return (error as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(raw)}`);
    };
    expect(refused({ period: 'day' }, 'period')).toMatch(/Risposta 505\/2020/);
    refused({ period: 'week' }, 'period');
    refused({ width: 20 }, 'width');
    refused({ width: 0 }, 'width');
    refused({ prefix: 'A\u0000' }, 'prefix');
    refused({ timeZone: 'Mars/Olympus' }, 'timeZone');
    refused({ correctionsOf: 'inv' }, 'correctionsOf');
    refused({ name: 'no spaces' } as object, 'key');
  });
});

describe('GaplessSeriesCalendar', () => {
  const series = (period: 'none' | 'year' | 'month', timeZone = 'UTC') => ({
    ...checkNewGaplessSeries({ name: 'inv', prefix: 'FT A', width: 4, period, timeZone }),
    createdAt: 0,
  });
  const newYearUtc = Date.UTC(2027, 0, 1, 0, 30);

  it('keys the period in the series’ time zone', () => {
    expect(new GaplessSeriesCalendar(series('none')).periodKey(newYearUtc)).toBe('');
    expect(new GaplessSeriesCalendar(series('year')).periodKey(newYearUtc)).toBe('2027');
    expect(new GaplessSeriesCalendar(series('month')).periodKey(newYearUtc)).toBe('202701');
    expect(
      new GaplessSeriesCalendar(series('year', 'America/New_York')).periodKey(newYearUtc),
    ).toBe('2026');
  });

  it('prints prefix, period and the padded counter', () => {
    expect(new GaplessSeriesCalendar(series('year')).text('2027', 12n)).toBe('FT A-2027-0012');
    expect(new GaplessSeriesCalendar(series('none')).text('', 12n)).toBe('FT A-0012');
  });
});
