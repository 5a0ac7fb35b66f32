/**
 * The database's own record of the ranges it committed: a test-only `AFTER UPDATE`
 * trigger on `leaf_alloc` writes every change of `max_id` to `leaf_alloc_audit`. It runs
 * inside the allocating transaction, so exactly the committed changes appear (a rolled-back
 * or lost-answer transaction leaves a row only if it committed). Installed only in a
 * harness's private database, never by the application.
 */
import type { CommittedRange } from './checker';
import type { TestDatabase } from '../../support/test-database';

/** Session variable a test sets before changing `max_id` by hand, so the audit can tell. */
const NOTE_VARIABLE = '@leaf_audit_note';

/** Creates the audit table and the trigger (after the migrations made `leaf_alloc`). */
export async function installAllocationAudit(db: TestDatabase): Promise<void> {
  await db.query(
    `CREATE TABLE leaf_alloc_audit (
       seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
       biz_tag VARCHAR(128) NOT NULL,
       old_max BIGINT NOT NULL,
       new_max BIGINT NOT NULL,
       note VARCHAR(64) NULL,
       conn BIGINT NOT NULL,
       at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
     ) ENGINE=InnoDB`,
  );
  await db.query(
    `CREATE TRIGGER leaf_alloc_audit_update AFTER UPDATE ON leaf_alloc FOR EACH ROW
     BEGIN
       IF NEW.max_id <> OLD.max_id THEN
         INSERT INTO leaf_alloc_audit (biz_tag, old_max, new_max, note, conn)
         VALUES (NEW.biz_tag, OLD.max_id, NEW.max_id, ${NOTE_VARIABLE}, CONNECTION_ID());
       END IF;
     END`,
  );
}

/** A lowering of `max_id` that was not an instance's hand-back (e.g. {@link lowerMaxIdByHand}). */
export interface Lowering {
  readonly tag: string;
  readonly from: bigint;
  readonly to: bigint;
  readonly seq: number;
  readonly note: string | null;
}

/** The audit read back: committed ranges (hand-backs applied), hand-backs and other lowerings. */
export interface AllocationAudit {
  readonly ranges: CommittedRange[];
  readonly handBacks: number;
  readonly lowerings: Lowering[];
}

/**
 * Reads the audit in commit order. A raise of `max_id` is the range `[old, new)`. A
 * lowering by the application (no note) that starts at the end of a range is a hand-back:
 * `[new, old)` is cut from the ranges (it may span the instance's two newest ones). A lowering with a note (or one
 * that does not fit a range) is listed in `lowerings`.
 */
export async function readAllocationAudit(db: TestDatabase): Promise<AllocationAudit> {
  const rows = await db.query<{
    seq: string;
    biz_tag: string;
    old_max: string;
    new_max: string;
    note: string | null;
    conn: string;
  }>(
    `SELECT CAST(seq AS CHAR) AS seq, biz_tag, CAST(old_max AS CHAR) AS old_max,
            CAST(new_max AS CHAR) AS new_max, note, CAST(conn AS CHAR) AS conn
       FROM leaf_alloc_audit ORDER BY leaf_alloc_audit.seq`,
  );
  const ranges: Array<{
    tag: string;
    start: bigint;
    end: bigint;
    seq: number;
    connectionId: number;
  }> = [];
  const lowerings: Lowering[] = [];
  let handBacks = 0;
  for (const row of rows) {
    const from = BigInt(row.old_max);
    const to = BigInt(row.new_max);
    const seq = Number(row.seq);
    if (to > from) {
      ranges.push({ tag: row.biz_tag, start: from, end: to, seq, connectionId: Number(row.conn) });
      continue;
    }
    const handedBack =
      row.note === null && ranges.some((r) => r.tag === row.biz_tag && r.end === from);
    if (handedBack) {
      // [to, from) was granted to the instance alone and never issued (its next segment and
      // possibly the contiguous rest of its current one): no range covers it any more.
      for (const range of ranges) {
        if (range.tag === row.biz_tag && range.end > to && range.start < from) {
          range.end = range.start > to ? range.start : to;
        }
      }
      handBacks++;
    } else {
      lowerings.push({ tag: row.biz_tag, from, to, seq, note: row.note });
    }
  }
  return { ranges: ranges.filter((r) => r.end > r.start), handBacks, lowerings };
}

/**
 * Lowers `max_id` of `tag` by `by`, as a restore of an old backup would, marked in the
 * audit as a hand edit. Returns the value before and after.
 */
export async function lowerMaxIdByHand(
  db: TestDatabase,
  tag: string,
  by: bigint,
): Promise<{ from: bigint; to: bigint }> {
  const session = await db.connect();
  try {
    await session.query(`SET ${NOTE_VARIABLE} = 'by hand'`);
    await session.query('START TRANSACTION');
    const [rows] = await session.query(
      'SELECT CAST(max_id AS CHAR) AS max_id FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE',
      [tag],
    );
    const from = BigInt((rows as Array<{ max_id: string }>)[0]!.max_id);
    const to = from - by;
    await session.query(`UPDATE leaf_alloc SET max_id = ${to.toString()} WHERE biz_tag = ?`, [tag]);
    await session.query('COMMIT');
    return { from, to };
  } finally {
    await session.end();
  }
}
