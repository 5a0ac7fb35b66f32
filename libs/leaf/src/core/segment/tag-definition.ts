import { assertValidKey, assertValidText } from '../arguments';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { MAX_INT64, type NewTag, type TagUpdate } from './leaf-alloc-store.port';

/** Largest `step` the `leaf_alloc.step` column (`int(11)`, signed) holds. */
export const MAX_TAG_STEP = 2_147_483_647;
/** Longest `description` the `leaf_alloc.description` column (`varchar(256)`) holds. */
export const MAX_TAG_DESCRIPTION = 256;

/**
 * Checks a tag to create and fills the defaults, before any store touches the table.
 * @throws {InvalidArgumentError} for a malformed tag, a step outside 1..2^31-1, a `maxId`
 *   outside 1..2^63-1 or a description that is not text of at most 256 characters
 *   (`assertValidText`).
 */
export function checkNewTag(input: NewTag): Required<NewTag> {
  assertValidKey(input.tag);
  assertValidStep(input.step);
  const maxId = input.maxId ?? 1n;
  if (typeof maxId !== 'bigint' || maxId < 1n || maxId > MAX_INT64) {
    throw new InvalidArgumentError('max_id must be an integer in 1..2^63-1', 'max_id');
  }
  return {
    tag: input.tag,
    maxId,
    step: input.step,
    description: checkDescription(input.description),
  };
}

/**
 * Checks a change to a tag.
 * @throws {InvalidArgumentError} when it changes nothing, or for a malformed tag, step or
 *   description.
 */
export function checkTagUpdate(tag: string, update: TagUpdate): TagUpdate {
  assertValidKey(tag);
  if (update.step === undefined && update.description === undefined) {
    throw new InvalidArgumentError('nothing to change: give step and/or description', 'step');
  }
  if (update.step !== undefined) assertValidStep(update.step);
  return {
    ...(update.step !== undefined ? { step: update.step } : {}),
    ...(update.description !== undefined
      ? { description: checkDescription(update.description) }
      : {}),
  };
}

function assertValidStep(step: unknown): asserts step is number {
  if (typeof step !== 'number' || !Number.isInteger(step) || step < 1 || step > MAX_TAG_STEP) {
    throw new InvalidArgumentError(`step must be an integer in 1..${MAX_TAG_STEP}`, 'step');
  }
}

function checkDescription(description: unknown): string | null {
  if (description === undefined || description === null) return null;
  assertValidText(description, 'description', MAX_TAG_DESCRIPTION);
  return description;
}
