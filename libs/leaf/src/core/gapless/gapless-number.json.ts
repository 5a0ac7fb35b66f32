/**
 * A gapless number on the wire (docs/gapless.md, "Routes, CLI and operations"): the routes answer it, the remote
 * client reads it back. The number is a decimal string, never a JSON number.
 */
import { GAPLESS_STATES, type GaplessState } from './gapless-store.port';
import type { GaplessNumber } from './gapless-batch';

/** {@link GaplessNumber} as JSON. */
export type GaplessNumberJson = Omit<GaplessNumber, 'number'> & { readonly number: string };

/** The JSON of a number. */
export function gaplessNumberJson(value: GaplessNumber): GaplessNumberJson {
  return { ...value, number: value.number.toString() };
}

const text = (value: unknown): value is string => typeof value === 'string';

/**
 * A number read back from a server's answer for `series` (and `key`, when the call named it).
 * @throws {Error} when the answer is not one (the client then fails that server over).
 */
export function gaplessNumberFromJson(body: string, series: string, key: string): GaplessNumber {
  const json = JSON.parse(body) as Partial<Record<keyof GaplessNumberJson, unknown>>;
  const { number, periodKey, state, reason, expiresAt } = json;
  if (
    json.series !== series ||
    json.key !== key ||
    !text(number) ||
    !/^[1-9]\d{0,18}$/.test(number) ||
    !text(periodKey) ||
    !text(json.text) ||
    !(GAPLESS_STATES as readonly unknown[]).includes(state) ||
    !(reason === null || text(reason)) ||
    !(expiresAt === null || Number.isSafeInteger(expiresAt))
  )
    throw new Error(`the answer is not a number of series "${series}" for key "${key}"`);
  return {
    series,
    periodKey,
    number: BigInt(number),
    text: json.text,
    state: state as GaplessState,
    key,
    reason: reason as string | null,
    expiresAt: expiresAt as number | null,
  };
}
