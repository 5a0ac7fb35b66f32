import pino from 'pino';
import { accessLogWriter, logOptions } from './logging.module';
import type { LogLevelName } from '../config/app-env';

/** Collects what is written, line by line. */
function sink(): { lines: string[]; write(line: string): boolean } {
  const lines: string[] = [];
  return {
    lines,
    write(line: string) {
      lines.push(line);
      return true;
    },
  };
}

/** The line pino itself writes for an access-log entry, with the application's options. */
function pinoLine(
  level: LogLevelName,
  entry: [reqId: string, method: string, url: string, statusCode: number, elapsedMs: number],
): string[] {
  const out = sink();
  const logger = pino(logOptions(level), out).child(
    {},
    { serializers: { req: (req: unknown) => req, res: (res: unknown) => res } },
  );
  const [reqId, method, url, statusCode, elapsedMs] = entry;
  const responseTime = Math.round(elapsedMs * 10) / 10;
  const line = { reqId, req: { method, url }, res: { statusCode }, responseTime };
  const msg = `${method} ${url} ${statusCode} ${responseTime} ms`;
  if (statusCode >= 500) logger.warn(line, msg);
  else logger.info(line, msg);
  return out.lines;
}

describe('accessLogWriter', () => {
  beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 11, 3, 13, 0, 0, 123)));
  afterEach(() => jest.restoreAllMocks());

  const entries: Array<[string, string, string, number, number]> = [
    [
      '6f1c2a4e-0b7d-4c1e-9a51-2b8f3d7e9c10',
      'GET',
      '/api/segment/get/leaf-segment-test',
      200,
      0.4321,
    ],
    ['req-from-test', 'GET', '/api/snowflake/get/a%22b?x=%5C', 200, 12],
    ['r:1', 'GET', '/api/segment/get/"quoted"\\back\u2028é\u0001', 404, 1.05],
    ['r.2', 'POST', '/admin/workers', 503, 30_000.04],
    ['r-3', 'GET', '/health/ready', 500, 0],
  ];

  it.each(entries)('writes the very line pino writes (%s %s %s %d)', (...entry) => {
    const out = sink();
    accessLogWriter(out, 'info')(...entry);
    expect(out.lines).toEqual(pinoLine('info', entry));
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0].endsWith('}\n')).toBe(true);
    expect(JSON.parse(out.lines[0])).toMatchObject({
      reqId: entry[0],
      req: { method: entry[1], url: entry[2] },
      res: { statusCode: entry[3] },
    });
  });

  it.each(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const)(
    'at level %s writes a line exactly when pino would',
    (level) => {
      for (const entry of entries) {
        const out = sink();
        accessLogWriter(out, level)(...entry);
        expect(out.lines).toEqual(pinoLine(level, entry));
      }
    },
  );

  it('formats the time of each millisecond', () => {
    const out = sink();
    const write = accessLogWriter(out, 'info');
    write(...entries[0]);
    jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 11, 3, 13, 0, 0, 124));
    write(...entries[0]);
    expect(out.lines.map((line) => (JSON.parse(line) as { time: string }).time)).toEqual([
      '2026-12-03T13:00:00.123Z',
      '2026-12-03T13:00:00.124Z',
    ]);
  });
});
