import { LeafError, LeafErrorCode } from './leaf.error';

/** The requested generator mode is switched off in this instance. */
export class ModeDisabledError extends LeafError {
  readonly code = LeafErrorCode.MODE_DISABLED;

  constructor(readonly mode: 'segment' | 'snowflake') {
    super(`${mode} mode is disabled`);
  }
}
