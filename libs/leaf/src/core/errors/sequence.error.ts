import { LeafError, LeafErrorCode } from './leaf.error';

/**
 * A sequence-mode refusal: nothing was issued; retrying after `retryAfterMs` (1 s, unless the
 * cause says more) usually succeeds.
 */
abstract class SequenceRefusal extends LeafError {
  override readonly retryAfterMs: number;

  protected constructor(
    readonly key: string,
    message: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(message, options);
    this.retryAfterMs = options?.retryAfterMs ?? 1000;
  }
}

/**
 * Sequence mode has no issuer for the key that can answer now: none is elected yet (a
 * handover or start-up), the elected one cannot be reached, or ZooKeeper is unreachable
 * (docs/design.md, "Sequence mode"). Retrying usually succeeds once a successor has taken over.
 */
export class SequenceNoIssuerError extends SequenceRefusal {
  readonly code = LeafErrorCode.SEQUENCE_NO_ISSUER;

  constructor(key: string, reason: string, options?: { cause?: unknown; retryAfterMs?: number }) {
    super(key, `No sequence issuer for key "${key}": ${reason}`, options);
  }
}

/**
 * This instance was the key's issuer, but its lease (bounded by its ZooKeeper session) may
 * have run out, so a successor may already be issuing: it refuses instead of handing out an
 * ID that could be below one the successor issued (docs/design.md, "Sequence mode").
 */
export class SequenceLeaseExpiredError extends SequenceRefusal {
  readonly code = LeafErrorCode.SEQUENCE_LEASE_EXPIRED;

  constructor(key: string, reason: string, options?: { cause?: unknown; retryAfterMs?: number }) {
    super(key, `Sequence issuer lease for key "${key}" is not valid: ${reason}`, options);
  }
}

/**
 * A range allocation of a sequence issuer refused by the database: the issuer row of its
 * group no longer names this instance's term (another instance claimed the group, or the row
 * was resigned), so no range is granted to a deposed issuer (docs/design.md, "Sequence mode
 * on the database"). The instance stops issuing for the group at once.
 */
export class SequenceFencedError extends SequenceRefusal {
  readonly code = LeafErrorCode.SEQUENCE_FENCED;

  constructor(
    key: string,
    /** The group whose issuer row refused the term. */
    readonly group: number,
    /** The term this instance held (decimal). */
    readonly term: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(
      key,
      `Range for key "${key}" refused: group ${group} is no longer issued by this instance in term ${term}`,
      options,
    );
  }
}
