/**
 * What every system scenario shares: its size (the CI subset and the full matrix run the
 * same function with a different size) and the one-line report the docs' figures come
 * from (docs/reliability.md).
 */
import {
  availability,
  checkUnique,
  type AvailabilitySummary,
  type UniqueResult,
} from '../harness/checker';
import type { History } from '../harness/history';

/** `ci`: the short version in `npm test`; `full`: `npm run test:system`. */
export type ScenarioSize = 'ci' | 'full';

/** The knobs a size sets. */
export interface SizeSettings {
  /** Application instances. */
  readonly instances: number;
  /** Length of the load around the fault. */
  readonly loadMs: number;
  /** Client loops. */
  readonly concurrency: number;
}

export const SIZES: Record<ScenarioSize, SizeSettings> = {
  ci: { instances: 2, loadMs: 8_000, concurrency: 8 },
  full: { instances: 3, loadMs: 30_000, concurrency: 32 },
};

/** The figures of one run, as printed and as docs/reliability.md quotes them. */
export interface ScenarioReport {
  readonly scenario: string;
  readonly size: ScenarioSize;
  readonly durationMs: number;
  readonly unique: UniqueResult;
  readonly availability: AvailabilitySummary;
  /** Scenario-specific facts (e.g. the 503 codes seen, the refused ranges). */
  readonly facts: Record<string, unknown>;
}

/** Checks uniqueness and summarises availability of `history`, and prints one report line. */
export function report(
  scenario: string,
  size: ScenarioSize,
  startedAt: number,
  history: History,
  facts: Record<string, unknown> = {},
): ScenarioReport {
  const result: ScenarioReport = {
    scenario,
    size,
    durationMs: Date.now() - startedAt,
    unique: checkUnique(history),
    availability: availability(history),
    facts,
  };
  const { unique, availability: a } = result;
  console.log(
    `[system] ${scenario} (${size}): ${unique.ids} IDs checked, ${unique.duplicateCount} duplicates, ` +
      `${a.ok} ok / ${a.fail} fail / ${a.info} info, longest gap ${a.longestGapMs} ms, ` +
      `run ${result.durationMs} ms; errors ${JSON.stringify(a.errors)}; ${JSON.stringify(facts, bigintJson)}`,
  );
  return result;
}

/** JSON replacer: bigint as a decimal string. */
export function bigintJson(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
