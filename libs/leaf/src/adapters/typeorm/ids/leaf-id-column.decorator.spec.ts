import { InvalidArgumentError } from '../../../core/errors/invalid-argument.error';
import { leafBigintIdTransformer, leafStringIdTransformer } from './leaf-id-column.decorator';

const UNSAFE = 2 ** 53; // not a safe integer: 2^53 + 1 reads as this too

describe('Leaf ID column transformers', () => {
  it('bigint: a bigint in the entity, a decimal string to the driver, exact beyond 2^53', () => {
    expect(leafBigintIdTransformer.to(9007199254740993n)).toBe('9007199254740993');
    expect(leafBigintIdTransformer.to(undefined)).toBeUndefined();
    expect(leafBigintIdTransformer.from('9007199254740993')).toBe(9007199254740993n);
    expect(leafBigintIdTransformer.from(42)).toBe(42n);
    expect(leafBigintIdTransformer.from(null)).toBeNull();
  });

  it('string: a decimal string both ways; a driver bigint or safe number comes back as a string', () => {
    expect(leafStringIdTransformer.to('9007199254740993')).toBe('9007199254740993');
    expect(leafStringIdTransformer.to(undefined)).toBeUndefined();
    expect(leafStringIdTransformer.from('9007199254740993')).toBe('9007199254740993');
    expect(leafStringIdTransformer.from(9007199254740993n)).toBe('9007199254740993');
    expect(leafStringIdTransformer.from(42)).toBe('42');
    expect(leafStringIdTransformer.from(undefined)).toBeUndefined();
  });

  it('refuses an unsafe number either way with INVALID_ARGUMENT', () => {
    for (const convert of [
      leafBigintIdTransformer.to,
      leafBigintIdTransformer.from,
      leafStringIdTransformer.to,
      leafStringIdTransformer.from,
    ]) {
      expect(() => convert(UNSAFE)).toThrow(InvalidArgumentError);
      expect(() => convert(UNSAFE)).toThrow(/bigNumberStrings/);
    }
  });
});
