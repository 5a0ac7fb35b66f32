import { assertValidKey, assertValidText } from './arguments';
import { InvalidArgumentError } from './errors/invalid-argument.error';

describe('at the door', () => {
  it('assertValidKey takes 1-128 characters of the key alphabet only', () => {
    for (const key of ['a', 'orders:20261204', 'A-b_c.d', 'k'.repeat(128)]) {
      expect(() => assertValidKey(key)).not.toThrow();
    }
    for (const key of ['', 'k'.repeat(129), 'a\u0000b', 'a b', 'été', 'a\ud800', 42, null]) {
      expect(() => assertValidKey(key)).toThrow(InvalidArgumentError);
    }
  });

  it('assertValidText takes well-formed text without control characters, up to its length', () => {
    for (const text of [
      '',
      'Orders of the shop',
      '订单 🚀',
      'tab-free, "quoted" & <b>',
      'd'.repeat(256),
    ]) {
      expect(() => assertValidText(text, 'description', 256)).not.toThrow();
    }
    for (const text of [
      'a\u0000b',
      '\u0001',
      '\u001b[31m',
      'line\nline',
      'a\u007f',
      'a\u0085',
      'a\ud800b',
      '\udc00',
      'd'.repeat(257),
      42,
      null,
    ]) {
      let error: unknown;
      try {
        assertValidText(text, 'description', 256);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe('description');
    }
  });
});
