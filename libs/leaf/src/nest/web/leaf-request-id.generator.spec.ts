import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { InvalidArgumentError } from '../../core/errors/invalid-argument.error';
import { SnowflakeNotReadyError } from '../../core/errors/snowflake-not-ready.error';
import { LeafRequestIdGenerator } from './leaf-request-id.generator';

describe('LeafRequestIdGenerator', () => {
  it('answers the snowflake ID of the synchronous path as a decimal string, with the key', () => {
    const keys: Array<string | undefined> = [];
    let next = 2n ** 62n;
    const ids = new LeafRequestIdGenerator(
      { onUnavailable: 'throw', key: 'req' },
      {
        getSync: (key) => {
          keys.push(key);
          return next++;
        },
      },
    );
    const { generate } = ids; // bound: passed around as a bare function
    expect(generate()).toBe('4611686018427387904');
    expect(generate()).toBe('4611686018427387905');
    expect(keys).toEqual(['req', 'req']);
  });

  it("'throw': the typed error propagates, also before a service is attached", () => {
    const ids = new LeafRequestIdGenerator({ onUnavailable: 'throw' });
    expect(() => ids.generate()).toThrow(SnowflakeNotReadyError);
    ids.attach({
      getSync: () => {
        throw new SnowflakeNotReadyError();
      },
    });
    expect(() => ids.generate()).toThrow(SnowflakeNotReadyError);
  });

  it('a function: the explicit fallback gets the LeafError and its answer is the ID', () => {
    const seen: unknown[] = [];
    const ids = new LeafRequestIdGenerator({
      onUnavailable: (error) => {
        seen.push(error);
        return `u-${seen.length}`;
      },
    });
    expect(ids.generate()).toBe('u-1');
    expect(seen[0]).toBeInstanceOf(SnowflakeNotReadyError);
    ids.attach({ getSync: () => 7n });
    expect(ids.generate()).toBe('7');
  });

  it("forFastify(): refuses 'throw' (Fastify leaves a request unanswered when genReqId throws)", () => {
    expect(() => new LeafRequestIdGenerator({ onUnavailable: 'throw' }).forFastify()).toThrow(
      LeafConfigurationError,
    );
    const ids = new LeafRequestIdGenerator({ onUnavailable: () => 'u' }, { getSync: () => 9n });
    expect(ids.forFastify()()).toBe('9');
  });

  it('never hides a bug: an error that is not a LeafError propagates even with a fallback', () => {
    const ids = new LeafRequestIdGenerator(
      { onUnavailable: () => 'fallback' },
      {
        getSync: () => {
          throw new TypeError('bug');
        },
      },
    );
    expect(() => ids.generate()).toThrow(TypeError);
    const invalid = new LeafRequestIdGenerator(
      { onUnavailable: () => 'fallback', key: 'bad key' },
      {
        getSync: () => {
          throw new InvalidArgumentError('bad key', 'key');
        },
      },
    );
    // A LeafError (here a misconfigured key) takes the fallback as documented.
    expect(invalid.generate()).toBe('fallback');
  });
});
