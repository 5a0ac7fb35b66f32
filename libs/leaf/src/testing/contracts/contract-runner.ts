/**
 * The test-framework functions the contract suites call. Jest (29, 30) and Vitest share this
 * API; the suites take it as an argument, so they run under either without declaring one as
 * a dependency. Left out, the runner's globals are used (Jest; Vitest with `globals: true`).
 *
 * ```ts
 * import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
 * leafAllocStoreContract('MyStore', open, { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach });
 * ```
 */
export interface ContractRunner {
  readonly describe: typeof describe;
  readonly it: typeof it;
  readonly expect: typeof expect;
  readonly beforeAll: typeof beforeAll;
  readonly afterAll: typeof afterAll;
  readonly beforeEach: typeof beforeEach;
  readonly afterEach: typeof afterEach;
}

const RUNNER_FUNCTIONS = [
  'describe',
  'it',
  'expect',
  'beforeAll',
  'afterAll',
  'beforeEach',
  'afterEach',
] as const;

/**
 * The runner's global functions (what Jest, and Vitest with `globals: true`, define).
 * @param scope where to look for them (the global object unless a test says otherwise)
 * @throws {Error} naming the missing globals and how to pass a runner instead.
 */
export function globalContractRunner(scope: object = globalThis): ContractRunner {
  const missing = RUNNER_FUNCTIONS.filter(
    (name) => typeof (scope as Record<string, unknown>)[name] !== 'function',
  );
  if (missing.length > 0) {
    throw new Error(
      `The contract suites need a test runner's ${missing.join(', ')}: call them from a Jest ` +
        'test file, or pass { describe, it, expect, beforeAll, afterAll, beforeEach, afterEach } ' +
        "imported from your runner (for example 'vitest') as the last argument.",
    );
  }
  return scope as unknown as ContractRunner;
}

/**
 * Opens a suite's harness once, before its cases (then calls `opened` with it), and closes it
 * after them: call it inside the suite's `describe`. The returned function reads the open
 * harness.
 */
export function harnessOnce<H extends { close(): Promise<void> }>(
  runner: ContractRunner,
  open: () => Promise<H>,
  opened: (harness: H) => void = () => undefined,
): () => H {
  let harness: H | undefined;
  runner.beforeAll(async () => {
    harness = await open();
    opened(harness);
  });
  runner.afterAll(async () => {
    await harness?.close();
  });
  return () => {
    if (harness === undefined) throw new Error('The contract harness is not open yet');
    return harness;
  };
}

/** A contract suite: `open` gives one implementation's harness; `runner` is Jest's by default. */
export type ContractSuite<H> = (
  name: string,
  open: () => Promise<H>,
  runner?: ContractRunner,
) => void;

/**
 * A contract suite named `<title> contract: <name>`: `cases` registers the cases, reading the
 * harness (opened once for all of them, see {@link harnessOnce}) through `harness()`.
 */
export function defineContract<H extends { close(): Promise<void> }>(
  title: string,
  cases: (harness: () => H, runner: ContractRunner) => void,
): ContractSuite<H> {
  return (name, open, runner = globalContractRunner()) => {
    runner.describe(`${title} contract: ${name}`, () => cases(harnessOnce(runner, open), runner));
  };
}
