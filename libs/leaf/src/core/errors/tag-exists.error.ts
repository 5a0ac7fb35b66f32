import { LeafError, LeafErrorCode } from './leaf.error';

/** A tag could not be created: `leaf_alloc` already has a row for it. Nothing was changed. */
export class TagExistsError extends LeafError {
  readonly code = LeafErrorCode.TAG_EXISTS;

  constructor(readonly tag: string) {
    super(`Tag "${tag}" already exists in leaf_alloc`);
  }
}
