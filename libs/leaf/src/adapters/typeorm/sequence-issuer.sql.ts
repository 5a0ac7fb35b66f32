import { SequenceFencedError } from '../../core/errors/sequence.error';
import type { IssuerFence } from '../../core/segment/leaf-alloc-store.port';
import type { SqlExecutor } from './leaf-alloc.sql';

/**
 * The statements of `leaf_sequence_issuer` (migration `CreateLeafSequenceIssuer1700000000003`;
 * docs/design.md, "Sequence mode on the database") for MySQL/MariaDB and PostgreSQL. Every
 * time is the database's: `expires_at` is milliseconds since the epoch on the database's clock,
 * computed by the statement itself, never sent by a process.
 */
export type IssuerDialect = 'mysql' | 'postgres';

/**
 * Now on the database's clock, in epoch milliseconds. MySQL/MariaDB: from `UTC_TIMESTAMP(3)`,
 * independent of the session's time zone (and of its daylight-saving hour);
 * PostgreSQL: `clock_timestamp()`, the statement's own instant (not the transaction's start).
 */
export function databaseNowMs(dialect: IssuerDialect): string {
  return dialect === 'mysql'
    ? "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)"
    : '(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint';
}

/** `?` placeholders numbered for PostgreSQL (the statements here hold no other `?`). */
function placeholders(dialect: IssuerDialect, sql: string): string {
  if (dialect === 'mysql') return sql;
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** A bigint column read as a decimal string on both databases. */
function asText(dialect: IssuerDialect, column: string): string {
  return dialect === 'mysql' ? `CAST(${column} AS CHAR)` : `CAST(${column} AS text)`;
}

/** The statements of one dialect. */
export interface IssuerStatements {
  readonly select: string;
  readonly insert: string;
  readonly claim: string;
  readonly renew: string;
  readonly resign: string;
  readonly fence: string;
}

/** The statements for `dialect` (lease lengths are bound as parameters). */
export function issuerStatements(dialect: IssuerDialect): IssuerStatements {
  const now = databaseNowMs(dialect);
  const sql = (text: string) => placeholders(dialect, text);
  const where = 'WHERE name = ? AND group_id = ?';
  const leaseEnd =
    dialect === 'mysql' ? `${now} + CAST(? AS SIGNED)` : `${now} + CAST(? AS bigint)`;
  return {
    select: sql(
      `SELECT holder, address, ${asText(dialect, 'term')} AS term, CASE WHEN expires_at < ${now} THEN 1 ELSE 0 END AS expired FROM leaf_sequence_issuer ${where}`,
    ),
    insert: sql(
      dialect === 'mysql'
        ? 'INSERT IGNORE INTO leaf_sequence_issuer (name, group_id, term, expires_at) VALUES (?, ?, 0, 0)'
        : 'INSERT INTO leaf_sequence_issuer (name, group_id, term, expires_at) VALUES (?, ?, 0, 0) ON CONFLICT DO NOTHING',
    ),
    // term = seen: of two claims of one expired row, the second finds the term raised.
    claim: sql(
      `UPDATE leaf_sequence_issuer SET holder = ?, address = ?, term = term + 1, expires_at = ${leaseEnd}, update_time = CURRENT_TIMESTAMP ${where} AND term = CAST(? AS ${dialect === 'mysql' ? 'SIGNED' : 'bigint'}) AND expires_at < ${now}`,
    ),
    renew: sql(
      `UPDATE leaf_sequence_issuer SET expires_at = ${leaseEnd}, update_time = CURRENT_TIMESTAMP ${where} AND holder = ? AND term = CAST(? AS ${dialect === 'mysql' ? 'SIGNED' : 'bigint'})`,
    ),
    // One millisecond in the past: a claim compares `expires_at < now`.
    resign: sql(
      `UPDATE leaf_sequence_issuer SET expires_at = ${now} - 1, update_time = CURRENT_TIMESTAMP ${where} AND holder = ? AND term = CAST(? AS ${dialect === 'mysql' ? 'SIGNED' : 'bigint'})`,
    ),
    // A shared lock until the allocation commits: a claim (an exclusive row lock) waits for it,
    // so no range is committed to a term after another term was claimed.
    fence: sql(
      `SELECT holder, ${asText(dialect, 'term')} AS term FROM leaf_sequence_issuer ${where} ${dialect === 'mysql' ? 'LOCK IN SHARE MODE' : 'FOR SHARE'}`,
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
  dialect: IssuerDialect,
  tag: string,
  fence: IssuerFence,
): Promise<void> {
  const [row] = (await db.query(issuerStatements(dialect).fence, [
    fence.name,
    fence.group,
  ])) as Array<{
    holder: string | null;
    term: string;
  }>;
  if (row === undefined || row.holder !== fence.holder || row.term !== fence.term.toString()) {
    throw new SequenceFencedError(tag, fence.group, fence.term.toString());
  }
}
