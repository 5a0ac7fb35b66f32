import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * Opaque IDs were asked for where no key ring is configured (docs/public-ids.md): the reason
 * says what to set. Nothing was taken.
 */
export class OpaqueDisabledError extends LeafError {
  readonly code = LeafErrorCode.OPAQUE_DISABLED;

  constructor(readonly reason: string) {
    super(`opaque IDs are off: ${reason}`);
  }
}

/**
 * An opaque ID's key version is not in the key ring: the key was retired (or is not deployed
 * here yet). The text cannot be read back here (docs/public-ids.md, "Key rotation").
 */
export class OpaqueKeyRetiredError extends LeafError {
  readonly code = LeafErrorCode.OPAQUE_KEY_RETIRED;

  constructor(readonly version: number) {
    super(`opaque key version ${version} is not in the key ring (retired, or not deployed here)`);
  }
}
