import { SequenceFencedError } from '../../core/errors/sequence.error';
import type { IssuerFence } from '../../core/segment/leaf-alloc-store.port';
import type { SqlExecutor } from './leaf-alloc.sql';
import type { SqlDialect } from './sql-dialect';

/**
 * The statements of `leaf_sequence_issuer` (migration `CreateLeafSequenceIssuer1700000000003`;
 * docs/design.md, "Sequence mode on the database") for MySQL/MariaDB and PostgreSQL. Every
 * time is the database's: `expires_at` is milliseconds since the epoch on the database's clock
 * (`SqlDialect.nowMs`), computed by the statement itself, never sent by a process.
 */

/** The statements for `dialect` (lease lengths are bound as parameters). */
export function issuerStatements(dialect: SqlDialect) {
  const now = dialect.nowMs;
  const sql = (text: string) => dialect.sql(text);
  const where = 'WHERE name = ? AND group_id = ?';
  const term = `term = CAST(? AS ${dialect.bigint})`;
  const leaseEnd = `${now} + CAST(? AS ${dialect.bigint})`;
  return {
    select: sql(
      `SELECT holder, address, CAST(term AS CHAR) AS term, CASE WHEN expires_at < ${now} THEN 1 ELSE 0 END AS expired FROM leaf_sequence_issuer ${where}`,
    ),
    insert: sql(
      dialect.insertIgnoring(
        'INTO leaf_sequence_issuer (name, group_id, term, expires_at) VALUES (?, ?, 0, 0)',
      ),
    ),
    // term = seen: of two claims of one expired row, the second finds the term raised.
    claim: sql(
      `UPDATE leaf_sequence_issuer SET holder = ?, address = ?, term = term + 1, expires_at = ${leaseEnd}, update_time = CURRENT_TIMESTAMP ${where} AND ${term} AND expires_at < ${now}`,
    ),
    renew: sql(
      `UPDATE leaf_sequence_issuer SET expires_at = ${leaseEnd}, update_time = CURRENT_TIMESTAMP ${where} AND holder = ? AND ${term}`,
    ),
    // One millisecond in the past: a claim compares `expires_at < now`.
    resign: sql(
      `UPDATE leaf_sequence_issuer SET expires_at = ${now} - 1, update_time = CURRENT_TIMESTAMP ${where} AND holder = ? AND ${term}`,
    ),
    // A shared lock until the allocation commits: a claim (an exclusive row lock) waits for it,
    // so no range is committed to a term after another term was claimed.
    fence: sql(
      `SELECT holder, CAST(term AS CHAR) AS term FROM leaf_sequence_issuer ${where}${dialect.forShare}`,
    ),
  };
}

/**
 * The fence of a sequence issuer's allocation, run first in the allocation's transaction:
 * the group's row must still name the fence's holder and term, and stays share-locked until
 * the transaction ends.
 * @throws {SequenceFencedError} when it does not (nothing is allocated).
 */
export async function checkIssuerFence(
  db: SqlExecutor,
  dialect: SqlDialect,
  tag: string,
  fence: IssuerFence,
): Promise<void> {
  const rows = await db.query(issuerStatements(dialect).fence, [fence.name, fence.group]);
  const [row] = rows as Array<{ holder: string | null; term: string }>;
  if (row === undefined || row.holder !== fence.holder || row.term !== fence.term.toString()) {
    throw new SequenceFencedError(tag, fence.group, fence.term.toString());
  }
}
