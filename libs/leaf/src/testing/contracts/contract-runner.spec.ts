import { globalContractRunner, type ContractRunner } from './contract-runner';
import { inMemoryAllocStoreHarness } from './in-memory-alloc.harness';
import { leafAllocStoreContract } from './leaf-alloc-store.contract';

// A runner that is not the global one: every function counts its calls, then delegates to
// Jest's (keeping its members: `it.each`, `expect.any`). The contract must register and
// assert through it alone.
const calls = new Map<string, number>();
function counted<T extends (...args: never[]) => unknown>(name: string, fn: T): T {
  const wrapper = (...args: never[]): unknown => {
    calls.set(name, (calls.get(name) ?? 0) + 1);
    return fn(...args);
  };
  return Object.assign(wrapper, fn) as unknown as T;
}
const runner: ContractRunner = {
  describe: counted('describe', describe),
  it: counted('it', it),
  expect: counted('expect', expect),
  beforeAll: counted('beforeAll', beforeAll),
  afterAll: counted('afterAll', afterAll),
  beforeEach: counted('beforeEach', beforeEach),
  afterEach: counted('afterEach', afterEach),
};

leafAllocStoreContract(
  'InMemoryAllocStore through an injected runner',
  inMemoryAllocStoreHarness,
  runner,
);

describe('ContractRunner', () => {
  // Declared after the contract, so it runs after every case of it.
  it('is what the contract registered its cases with and asserted through', () => {
    expect(calls.get('describe')).toBeGreaterThanOrEqual(1);
    expect(calls.get('it')).toBeGreaterThanOrEqual(20);
    expect(calls.get('beforeAll')).toBe(1);
    expect(calls.get('afterAll')).toBe(1);
    expect(calls.get('expect')).toBeGreaterThanOrEqual(90);
  });

  it('defaults to the runner globals, and names what is missing without them', () => {
    expect(globalContractRunner().describe).toBe(describe);
    expect(() => globalContractRunner({ describe, it })).toThrow(
      /need a test runner's expect, beforeAll, afterAll, beforeEach, afterEach/,
    );
  });
});
