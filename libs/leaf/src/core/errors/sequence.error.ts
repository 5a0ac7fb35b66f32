import { LeafError, LeafErrorCode } from './leaf.error';

/** How long callers are told to wait after a sequence-mode refusal, unless the cause says more. */
const SEQUENCE_RETRY_AFTER_MS = 1000;

/**
 * Sequence mode has no issuer for the key that can answer now: none is elected yet (a
 * handover or start-up), the elected one cannot be reached, or ZooKeeper is unreachable
 * (docs/design.md, "Sequence mode"). Nothing was issued; retrying after `retryAfterMs`
 * usually succeeds once a successor has taken over.
 */
export class SequenceNoIssuerError extends LeafError {
  readonly code = LeafErrorCode.SEQUENCE_NO_ISSUER;
  override readonly retryAfterMs: number;

  constructor(
    readonly key: string,
    reason: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(`No sequence issuer for key "${key}": ${reason}`, options);
    this.retryAfterMs = options?.retryAfterMs ?? SEQUENCE_RETRY_AFTER_MS;
  }
}

/**
 * This instance was the key's issuer, but its lease (bounded by its ZooKeeper session) may
 * have run out, so a successor may already be issuing: it refuses instead of handing out an
 * ID that could be below one the successor issued (docs/design.md, "Sequence mode").
 */
export class SequenceLeaseExpiredError extends LeafError {
  readonly code = LeafErrorCode.SEQUENCE_LEASE_EXPIRED;
  override readonly retryAfterMs: number;

  constructor(
    readonly key: string,
    reason: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(`Sequence issuer lease for key "${key}" is not valid: ${reason}`, options);
    this.retryAfterMs = options?.retryAfterMs ?? SEQUENCE_RETRY_AFTER_MS;
  }
}
