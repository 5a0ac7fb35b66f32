import { ZonedCalendar, type CalendarPeriod } from './zoned-calendar';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
/** `period` with its bounds as ISO instants. */
const shown = ({ key, start, end }: CalendarPeriod) => ({ key, start: iso(start), end: iso(end) });
const HOUR = 3_600_000;

describe('ZonedCalendar', () => {
  it('gives the UTC day with its bounds', () => {
    expect(shown(new ZonedCalendar('UTC').period(at('2026-12-04T12:00:00Z'), 'day'))).toEqual({
      key: '20261204',
      start: '2026-12-04T00:00:00.000Z',
      end: '2026-12-05T00:00:00.000Z',
    });
  });

  it("takes the zone's date, not UTC's: 16:30Z is already tomorrow in Shanghai", () => {
    const shanghai = new ZonedCalendar('Asia/Shanghai');
    expect(shown(shanghai.period(at('2026-12-04T16:30:00Z'), 'day'))).toMatchObject({
      key: '20261205',
      start: '2026-12-04T16:00:00.000Z',
    });
    expect(shanghai.key(at('2026-12-04T15:59:59.999Z'), 'day')).toBe('20261204');
    expect(shanghai.key(at('2026-12-04T16:00:00.000Z'), 'day')).toBe('20261205');
  });

  it('has 23- and 25-hour days at the DST changes of New York', () => {
    const newYork = new ZonedCalendar('America/New_York');
    const spring = newYork.period(at('2026-03-08T12:00:00Z'), 'day');
    expect(spring.key).toBe('20260308');
    expect(spring.end - spring.start).toBe(23 * HOUR);
    const autumn = newYork.period(at('2026-11-01T12:00:00Z'), 'day');
    expect(autumn.end - autumn.start).toBe(25 * HOUR);
    expect(iso(autumn.end)).toBe('2026-11-02T05:00:00.000Z');
  });

  it('starts a day whose midnight the DST change skips at its first instant (Santiago, 01:00)', () => {
    const santiago = new ZonedCalendar('America/Santiago');
    const skipped = santiago.period(at('2026-09-06T12:00:00Z'), 'day');
    expect(shown(skipped)).toMatchObject({ key: '20260906', start: '2026-09-06T04:00:00.000Z' });
    const before = santiago.period(at('2026-09-05T12:00:00Z'), 'day');
    expect(before.end).toBe(skipped.start);
  });

  it('gives months and years, their last millisecond and the next first one', () => {
    const berlin = new ZonedCalendar('Europe/Berlin');
    const december = berlin.period(at('2026-12-31T22:59:59.999Z'), 'month');
    expect(shown(december)).toEqual({
      key: '202612',
      start: '2026-11-30T23:00:00.000Z',
      end: '2026-12-31T23:00:00.000Z',
    });
    expect(berlin.key(december.end, 'month')).toBe('202701');
    expect(berlin.key(december.end, 'year')).toBe('2027');
    const kiritimati = new ZonedCalendar('Pacific/Kiritimati');
    expect(kiritimati.period(at('2026-12-31T10:00:00Z'), 'year').key).toBe('2027');
    expect(iso(kiritimati.period(at('2026-12-31T09:59:59.999Z'), 'year').end)).toBe(
      '2026-12-31T10:00:00.000Z',
    );
  });

  it('crosses February of a leap year', () => {
    const utc = new ZonedCalendar('UTC');
    expect(utc.period(at('2028-02-29T23:59:59.999Z'), 'day').key).toBe('20280229');
    expect(iso(utc.period(at('2028-02-10T00:00:00Z'), 'month').end)).toBe(
      '2028-03-01T00:00:00.000Z',
    );
  });

  it('names the period of a key, and refuses keys that name none', () => {
    const tokyo = new ZonedCalendar('Asia/Tokyo');
    const period = tokyo.periodOf('20261204', 'day');
    expect(iso(period.start)).toBe('2026-12-03T15:00:00.000Z');
    expect(() => tokyo.periodOf('20260230', 'day')).toThrow(RangeError);
    expect(() => tokyo.periodOf('202613', 'month')).toThrow(RangeError);
    expect(() => tokyo.periodOf('2026', 'day')).toThrow(RangeError);
  });

  it('refuses a year outside 1000..9999', () => {
    expect(() => new ZonedCalendar('UTC').key(Date.UTC(10_000, 0, 1), 'day')).toThrow(RangeError);
  });
});
