/**
 * `leaf bounds` (src/cli-snowflake.ts), run in this process: it needs no database, ZooKeeper or
 * instance. The bounds are checked against IDs composed at the interval's ends and just
 * outside them; `leaf decode` (moved here with it) is covered by test/cli.e2e-spec.ts.
 */
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from 'nestjs-leaf';
import { JS_SAFE_EPOCH, SNOWFLAKE_LAYOUTS } from 'nestjs-leaf/server';
import { runCli } from './cli';

async function cli(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    env,
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
  });
  return { code, stdout, stderr };
}

const MARCH = Date.parse('2026-03-01T00:00:00Z');
const APRIL = Date.parse('2026-04-01T00:00:00Z');

describe('leaf bounds', () => {
  it('prints the IDs of [from, to] for the layout: IDs of the interval inside, the milliseconds around it outside', async () => {
    const layout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);
    const { code, stdout } = await cli([
      'bounds',
      '2026-03-01',
      '2026-03-31T23:59:59.999Z',
      '--json',
    ]);
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as Record<string, unknown>;
    expect(json).toEqual({
      from: MARCH,
      to: APRIL - 1,
      min: expect.stringMatching(/^\d+$/),
      max: expect.stringMatching(/^\d+$/),
      // unix_ts_ms in hex: 019ca6b1dc00 and 019d4656ffff.
      uuidMin: '019ca6b1-dc00-7000-8000-000000000000',
      uuidMax: '019d4656-ffff-7fff-bfff-ffffffffffff',
    });
    const min = BigInt(json.min as string);
    const max = BigInt(json.max as string);
    expect(min).toBe(layout.compose(MARCH, 0, 0));
    expect(max).toBe(layout.compose(APRIL - 1, layout.maxWorkerId, layout.maxSequence));
    expect(layout.compose(MARCH - 1, layout.maxWorkerId, layout.maxSequence)).toBe(min - 1n);
    expect(layout.compose(APRIL, 0, 0)).toBe(max + 1n);
    // The same interval in ms and with an offset; one instant when `to` is left out.
    const offset = await cli(['bounds', String(MARCH), '2026-04-01T07:59:59.999+08:00', '--json']);
    expect(JSON.parse(offset.stdout)).toEqual(json);
    const instant = JSON.parse((await cli(['bounds', String(MARCH), '--json'])).stdout);
    expect(instant).toMatchObject({ from: MARCH, to: MARCH, min: json.min });
    const text = await cli(['bounds', '2026-03-01']);
    expect(text.stdout).toContain(`min      ${json.min}\n`);
    expect(text.stdout).toContain('from     1772323200000 (2026-03-01T00:00:00.000Z)');
  });

  it('uses the layout options: js-safe and its epoch, data-centre bits, --epoch', async () => {
    const jsSafe = new SnowflakeLayout(JS_SAFE_EPOCH, SNOWFLAKE_LAYOUTS['js-safe']);
    const { stdout } = await cli(['bounds', String(MARCH), '--layout', 'js-safe', '--json']);
    expect(JSON.parse(stdout)).toMatchObject({
      min: jsSafe.compose(MARCH, 0, 0).toString(),
      max: jsSafe.compose(MARCH, jsSafe.maxWorkerId, jsSafe.maxSequence).toString(),
    });
    // Data-centre bits split the worker field: the bounds span every data centre, the same IDs.
    const split = await cli(['bounds', String(MARCH), '--data-center-bits', '3', '--json']);
    expect(JSON.parse(split.stdout)).toEqual(
      JSON.parse((await cli(['bounds', String(MARCH), '--json'])).stdout),
    );
    const epoch = await cli(['bounds', String(MARCH), '--epoch', String(MARCH), '--json']);
    expect(JSON.parse(epoch.stdout)).toMatchObject({ min: '0', max: String(2 ** 22 - 1) });
  });

  it('refuses times outside the layout, a reversed interval and bad text with exit 1 and the code; usage with 2', async () => {
    const cases: Array<[string[], string]> = [
      [['bounds', '2010-11-04T01:42:54.656Z'], 'LEAF_TIME_BEFORE_EPOCH'],
      [['bounds', '2026-03-01', '2081-01-01'], 'LEAF_TIME_BEYOND_LAYOUT'],
      [['bounds', '2026-03-02', '2026-03-01'], 'LEAF_INVALID_ARGUMENT'],
      [['bounds', '2026-02-30'], 'LEAF_INVALID_ARGUMENT'],
      [['bounds', '2026-03-01T10:00'], 'LEAF_INVALID_ARGUMENT'],
      [['bounds', 'yesterday'], 'LEAF_INVALID_ARGUMENT'],
    ];
    for (const [args, code] of cases) {
      const result = await cli(args);
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({
        args,
        code: 1,
        stderr: expect.stringContaining(`[${code}]`),
      });
    }
    expect((await cli(['bounds'])).code).toBe(2);
    expect((await cli(['bounds', '1', '2', '3'])).code).toBe(2);
    expect((await cli(['bounds', '2026-03-01', '--layout', 'nope'])).code).toBe(2);
  });
});
