import { of, lastValueFrom } from 'rxjs';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { StreamableFile } from '@nestjs/common';
import { SnowflakeLayout } from '../../core/snowflake/snowflake-layout';
import { LeafIdJsonInterceptor, toIdJson } from './id-json';

describe('toIdJson', () => {
  it('turns every bigint into its decimal string, however deep; keeps the rest', () => {
    const big = (1n << 62n) + 3n;
    const date = new Date(0);
    const value = { id: big, nested: { ids: [1n, big], n: 5, s: 'x', nil: null }, date };
    const json = toIdJson(value);
    expect(json).toEqual({
      id: '4611686018427387907',
      nested: { ids: ['1', '4611686018427387907'], n: 5, s: 'x', nil: null },
      date,
    });
    expect(JSON.parse(JSON.stringify(json))).toEqual({
      id: '4611686018427387907',
      nested: { ids: ['1', '4611686018427387907'], n: 5, s: 'x', nil: null },
      date: '1970-01-01T00:00:00.000Z',
    });
    expect(value.id).toBe(big); // not mutated
  });

  it('makes a decoded snowflake ID serializable', () => {
    const layout = new SnowflakeLayout(1288834974657);
    const id = 2128094966440788019n;
    const json = JSON.stringify(toIdJson(layout.decode(id)));
    expect(JSON.parse(json)).toMatchObject({ id: '2128094966440788019' });
  });

  it('passes primitives, files and buffers unchanged; refuses a cycle', () => {
    expect(toIdJson(7n)).toBe('7');
    expect(toIdJson('7')).toBe('7');
    expect(toIdJson(undefined)).toBeUndefined();
    const file = new StreamableFile(Buffer.from('x'));
    expect(toIdJson(file)).toBe(file);
    const buffer = Buffer.from('x');
    expect(toIdJson(buffer)).toBe(buffer);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => toIdJson(cyclic)).toThrow(TypeError);
    const shared = { id: 1n };
    expect(toIdJson([shared, shared])).toEqual([{ id: '1' }, { id: '1' }]);
  });

  it('LeafIdJsonInterceptor applies it to what a handler returns', async () => {
    const next: CallHandler = { handle: () => of({ ids: [1n, 2n] }) };
    const result = await lastValueFrom(
      new LeafIdJsonInterceptor().intercept({} as ExecutionContext, next),
    );
    expect(result).toEqual({ ids: ['1', '2'] });
  });
});
