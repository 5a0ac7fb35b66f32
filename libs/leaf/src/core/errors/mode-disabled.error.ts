import type { LeafMode } from '../id.service';
import { LeafError, LeafErrorCode } from './leaf.error';

/** The requested generator mode is switched off in this instance. */
export class ModeDisabledError extends LeafError {
  readonly code = LeafErrorCode.MODE_DISABLED;

  constructor(readonly mode: LeafMode) {
    super(`${mode} mode is disabled`);
  }
}
