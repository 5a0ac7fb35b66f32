/** The issuer row of one group as the database holds it (`leaf_sequence_issuer`). */
export interface IssuerRow {
  /** The run ID of the process that claimed it last, or null (never claimed). */
  readonly holder: string | null;
  /** Where that process takes forwarded calls, or null. */
  readonly address: string | null;
  /** Increases by one on every claim. */
  readonly term: bigint;
  /** True when `expires_at` has passed on the database's clock. */
  readonly expired: boolean;
}

/**
 * The database-held election of sequence mode (docs/design.md, "Sequence mode on the
 * database"): one row per issuer group, whose `expires_at` is compared with the database's
 * own clock only. Real adapter: `TypeormSequenceIssuerStore` (MySQL/MariaDB, PostgreSQL).
 */
export interface SequenceIssuerStore {
  /**
   * The row of `group`, inserted (never claimed, expired) when missing.
   * @throws {Error} on a database failure.
   */
  read(name: string, group: number): Promise<IssuerRow>;
  /**
   * Takes the row when it is still at `seenTerm` and expired on the database's clock: holder
   * and address written, `term = seenTerm + 1`, `expires_at = now + leaseMs`.
   * @returns the new term, or null when another claim or renewal came first.
   */
  claim(
    name: string,
    group: number,
    claim: { holder: string; address: string; seenTerm: bigint; leaseMs: number },
  ): Promise<bigint | null>;
  /**
   * `expires_at = now + leaseMs` where the row still names `holder` in `term`.
   * @returns false when it does not (deposed).
   */
  renew(
    name: string,
    group: number,
    holder: string,
    term: bigint,
    leaseMs: number,
  ): Promise<boolean>;
  /**
   * `expires_at = now` where the row still names `holder` in `term`: a successor need not wait.
   * @returns false when it does not.
   */
  resign(name: string, group: number, holder: string, term: bigint): Promise<boolean>;
}
