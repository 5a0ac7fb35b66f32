import { LeafError, LeafErrorCode } from './leaf.error';

/** The business tag has no row in `leaf_alloc` (Leaf's `-2`, key not exists). */
export class TagNotFoundError extends LeafError {
  readonly code = LeafErrorCode.TAG_NOT_FOUND;
  override readonly leafCode = -2;

  constructor(readonly tag: string) {
    super(`Tag "${tag}" does not exist in leaf_alloc`);
  }
}
