import type { LeafMode } from '../id.service';
import { LeafError, LeafErrorCode } from './leaf.error';

/** The requested generator mode (or gapless series, `gapless`) is switched off in this instance. */
export class ModeDisabledError extends LeafError {
  readonly code = LeafErrorCode.MODE_DISABLED;

  constructor(readonly mode: LeafMode | 'gapless') {
    super(`${mode} mode is disabled`);
  }
}
