import { InvalidArgumentError } from '../../core/errors/invalid-argument.error';
import { LeafErrorCode } from '../../core/errors/leaf.error';
import { MAX_LEAF_ID } from '../../core/leaf-id-text';
import { ParseLeafIdPipe } from './parse-leaf-id.pipe';

describe('ParseLeafIdPipe', () => {
  const pipe = new ParseLeafIdPipe();
  const param = { type: 'param', data: 'orderId' } as const;

  it('reads a decimal ID into a bigint, without a number in between (above 2^53 too)', () => {
    expect(pipe.transform('1', param)).toBe(1n);
    expect(pipe.transform('9007199254740993', param)).toBe(9007199254740993n);
    expect(pipe.transform('9223372036854775807', param)).toBe(MAX_LEAF_ID);
  });

  it('keeps the validated string with { as: "string" }', () => {
    expect(new ParseLeafIdPipe({ as: 'string' }).transform('2128094966440788019', param)).toBe(
      '2128094966440788019',
    );
  });

  it.each([
    ['9223372036854775808', '2^63'],
    ['99999999999999999999', '20 digits'],
    ['0', 'zero (never an ID)'],
    ['007', 'leading zeros'],
    ['+1', 'a sign'],
    ['-1', 'negative'],
    [' 1', 'a space'],
    ['1e3', 'exponent'],
    ['0x10', 'hex'],
    ['1.0', 'a fraction'],
    ['', 'empty'],
    [undefined, 'missing'],
    [12, 'a number'],
  ] as Array<[unknown, string]>)(
    'refuses %p (%s) with InvalidArgumentError naming the parameter',
    (value) => {
      let thrown: unknown;
      try {
        pipe.transform(value, param);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidArgumentError);
      expect(thrown).toMatchObject({ code: LeafErrorCode.INVALID_ARGUMENT, argument: 'orderId' });
    },
  );
});
