import { LeafError, LeafErrorCode } from './leaf.error';

/** The module options (or the application's environment) are invalid. Lists every problem at once. */
export class LeafConfigurationError extends LeafError {
  readonly code = LeafErrorCode.CONFIGURATION;

  constructor(readonly problems: readonly string[]) {
    super(`Invalid Leaf configuration:\n  - ${problems.join('\n  - ')}`);
  }
}
