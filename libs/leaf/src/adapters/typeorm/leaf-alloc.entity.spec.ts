import { bigintTransformer } from './leaf-alloc.entity';

describe('bigintTransformer', () => {
  it('reads decimal strings exactly, beyond 2^53', () => {
    expect(bigintTransformer.from('9007199254740993')).toBe(9007199254740993n);
    expect(bigintTransformer.to(9007199254740993n)).toBe('9007199254740993');
  });

  it('refuses a number that may already have been rounded', () => {
    expect(bigintTransformer.from(42)).toBe(42n);
    expect(() => bigintTransformer.from(9007199254740992)).toThrow(/bigNumberStrings/);
  });
});
