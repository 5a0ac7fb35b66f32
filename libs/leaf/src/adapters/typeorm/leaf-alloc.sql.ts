import { advanceMaxId, checkHandBack } from '../../core/segment/allocation-rule';
import { TagExistsError } from '../../core/errors/tag-exists.error';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import type { HighWaterFence } from '../../core/segment/high-water';
import { highWaterKey } from '../../core/segment/residue-class';
import type {
  AllocatedRange,
  LeafAllocRow,
  NewTag,
  RangeGrant,
  RangeJournalEntry,
  TagUpdate,
} from '../../core/segment/leaf-alloc-store.port';
import { checkNewTag, checkTagUpdate } from '../../core/segment/tag-definition';
import type { SqlDialect } from './sql-dialect';

/**
 * The SQL the TypeORM allocation stores run on `leaf_alloc`: plain SQL, not a repository, so
 * the DataSource need not list `LeafAllocEntity`. Written in MySQL's form (`sql-dialect.ts`;
 * the caller gives the row lock's clause): keep every value bound or written as checked digits,
 * and no `?` anywhere else (PostgreSQL's executor numbers the placeholders). `max_id` is always
 * read as a decimal string and converted with `BigInt`: it never passes through a JavaScript
 * number, whatever the driver's big-number settings.
 */

/** Anything that runs SQL: a DataSource, an EntityManager or a QueryRunner. */
export interface SqlExecutor {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/** `max_id` of a row, as every statement here reads it. */
const MAX_ID = 'CAST(max_id AS CHAR) AS max_id';

interface RawRow {
  tag: string;
  max_id: string;
  step: number | string;
  description: string | null;
  update_time: Date | string | null;
  id_modulus?: number | string | null;
  id_residue?: number | string | null;
}

/** Every business tag, in no particular order. */
export async function selectTags(db: SqlExecutor): Promise<string[]> {
  const rows = (await db.query('SELECT biz_tag AS tag FROM leaf_alloc')) as Array<{ tag: string }>;
  return rows.map((row) => row.tag);
}

const ROW_COLUMNS = `biz_tag AS tag, ${MAX_ID}, step, description, update_time`;
/**
 * The residue class columns (migration `AddLeafAllocResidueClass1700000000002`), read only
 * when several databases serve the tags: a single database runs exactly the statements it ran
 * before they existed.
 */
const CLASS_COLUMNS = ', id_modulus, id_residue';

function toRow(row: RawRow): LeafAllocRow {
  return {
    tag: row.tag,
    maxId: exactBigint(row.max_id),
    step: Number(row.step),
    description: row.description,
    updateTime: timeOf(row.update_time),
    ...classOf(row),
  };
}

/** The residue class of a row read with {@link CLASS_COLUMNS} (nothing when not read, or null). */
function classOf(row: Pick<RawRow, 'id_modulus' | 'id_residue'>): {
  modulus?: number;
  residue?: number;
} {
  if (row.id_modulus === undefined || row.id_modulus === null) return {};
  return { modulus: Number(row.id_modulus), residue: Number(row.id_residue) };
}

/** Every row, ordered by tag; with `classes`, their residue classes too. */
export async function selectRows(db: SqlExecutor, classes = false): Promise<LeafAllocRow[]> {
  const rows = (await db.query(
    `SELECT ${ROW_COLUMNS}${classes ? CLASS_COLUMNS : ''} FROM leaf_alloc ORDER BY biz_tag`,
  )) as RawRow[];
  return rows.map(toRow);
}

/** The row of `tag`, or `null`; with `classes`, its residue class too. */
export async function selectRow(
  db: SqlExecutor,
  tag: string,
  classes = false,
): Promise<LeafAllocRow | null> {
  const [row] = (await db.query(
    `SELECT ${ROW_COLUMNS}${classes ? CLASS_COLUMNS : ''} FROM leaf_alloc WHERE biz_tag = ?`,
    [tag],
  )) as RawRow[];
  return row ? toRow(row) : null;
}

/**
 * Inserts a new row after {@link checkNewTag}. `max_id` and `step` are written as integer
 * literals (checked digits only), so a `max_id` beyond 2^53 never passes through a double.
 * @throws {InvalidArgumentError} for invalid input (nothing is written).
 * @throws {TagExistsError} when `isDuplicate` recognises the driver's duplicate-key error.
 */
export async function insertRow(
  db: SqlExecutor,
  input: NewTag,
  isDuplicate: (error: unknown) => boolean,
): Promise<LeafAllocRow> {
  const tag = checkNewTag(input);
  try {
    await db.query(
      `INSERT INTO leaf_alloc (biz_tag, max_id, step, description, update_time) VALUES (?, ${tag.maxId.toString()}, ${tag.step}, ?, CURRENT_TIMESTAMP)`,
      [tag.tag, tag.description],
    );
  } catch (error) {
    if (isDuplicate(error)) throw new TagExistsError(tag.tag);
    throw error;
  }
  const row = await selectRow(db, tag.tag);
  if (!row) throw new TagNotFoundError(tag.tag);
  return row;
}

/**
 * Changes `step` and/or `description` of a row after {@link checkTagUpdate}; `max_id` is
 * not in the statement.
 * @throws {InvalidArgumentError} for invalid input (nothing is written).
 * @throws {TagNotFoundError} when the row does not exist.
 */
export async function updateRow(
  db: SqlExecutor,
  tag: string,
  update: TagUpdate,
): Promise<LeafAllocRow> {
  const change = checkTagUpdate(tag, update);
  const sets: string[] = [];
  const params: unknown[] = [];
  if (change.step !== undefined) sets.push(`step = ${change.step}`);
  if (change.description !== undefined) {
    sets.push('description = ?');
    params.push(change.description);
  }
  if (!(await selectRow(db, tag))) throw new TagNotFoundError(tag);
  await db.query(
    `UPDATE leaf_alloc SET ${sets.join(', ')}, update_time = CURRENT_TIMESTAMP WHERE biz_tag = ?`,
    [...params, tag],
  );
  const row = await selectRow(db, tag);
  if (!row) throw new TagNotFoundError(tag);
  return row;
}

/**
 * The body of one allocation, run inside the caller's open transaction: read the row with
 * the `lock` clause (`FOR UPDATE`: the row lock; empty on SQLite, whose `BEGIN IMMEDIATE`
 * already holds the database's write lock), apply {@link advanceMaxId}, add the step, read `max_id` back in
 * the same transaction. A refusal throws before anything is written.
 *
 * With a `fence` (the high-water mark, docs/design.md) the range starts at
 * `max(max_id, mark)` (a `max_id` below the mark is repaired by this very update) and the
 * mark is raised to the new `max_id` before the caller commits.
 * @throws {TagNotFoundError} when the row does not exist (nothing is created).
 * @throws {AllocationError} for a step that is not a positive integer.
 * @throws {IdOverflowError} when the new `max_id` would pass 2^63-1.
 * @throws {HighWaterUnavailableError} / `HighWaterConflict` from the fence.
 */
export async function advanceRow(
  db: SqlExecutor,
  tag: string,
  step: number | undefined,
  {
    lock,
    fence = null,
    classes = false,
    journal = null,
  }: {
    lock: string;
    fence?: HighWaterFence | null;
    classes?: boolean;
    journal?: RangeJournalEntry | null;
  },
): Promise<AllocatedRange> {
  // The class is read with the row, under its lock: the range is served in the class the
  // database said when it granted it (docs/design.md, "Several databases per tag").
  const [row] = (await db.query(
    `SELECT ${MAX_ID}, step${classes ? CLASS_COLUMNS : ''} FROM leaf_alloc WHERE biz_tag = ?${lock}`,
    [tag],
  )) as Array<Pick<RawRow, 'max_id' | 'step' | 'id_modulus' | 'id_residue'>>;
  if (!row) throw new TagNotFoundError(tag);
  const applied = step ?? Number(row.step);
  const found = exactBigint(row.max_id);
  const cls = classOf(row);
  // One mark per tag per database: each database's max_id is its own (residue 0 keeps the
  // single database's znode).
  const plan = fence ? await fence.plan(tag, found, highWaterKey(tag, cls.residue ?? 0)) : null;
  const next = advanceMaxId(tag, plan ? plan.base : found, applied);
  // The step is written into the statement as an integer literal, not bound: better-sqlite3
  // binds a JavaScript number as a REAL, and `max_id + 3.0` is computed in floating point,
  // rounding any max_id above 2^53 (2^60 + 7 + 3 would become 2^60). advanceMaxId has just
  // checked that `applied` is a positive safe integer, so the literal is digits only. With a
  // fence the new value itself is written (a checked bigint; the row is ours while locked).
  // update_time: MySQL's ON UPDATE clause would set it too; SQLite has none.
  const value = plan ? next.toString() : `max_id + ${applied}`;
  await db.query(
    `UPDATE leaf_alloc SET max_id = ${value}, update_time = CURRENT_TIMESTAMP WHERE biz_tag = ?`,
    [tag],
  );
  // Read back inside the same transaction: the new value is ours alone while the lock is held.
  const [after] = (await db.query(`SELECT ${MAX_ID}, step FROM leaf_alloc WHERE biz_tag = ?`, [
    tag,
  ])) as Array<Pick<RawRow, 'max_id' | 'step'>>;
  if (!after) throw new TagNotFoundError(tag);
  const maxId = exactBigint(after.max_id);
  // In this transaction: the journal has a row exactly for every range that commits.
  if (journal) await insertJournalRow(db, tag, maxId - BigInt(applied), maxId, journal, cls);
  // Durable before COMMIT, so before anyone can be served from the range.
  if (plan) await fence!.publish(plan, maxId);
  return {
    tag,
    maxId,
    baseStep: Number(after.step),
    appliedStep: applied,
    ...(plan ? { repair: plan.repair } : {}),
    ...cls,
  };
}

/** A journal entry's identity as stored: 1-255 characters. */
const MAX_INSTANCE_LENGTH = 255;

/**
 * Writes the ID journal's row of the range `[start, end)` of `tag` (docs/design.md, "The ID
 * journal"), inside the caller's allocation transaction. The bigints are written as checked
 * digit literals (never through a double); text is bound. `granted_at` is this process's clock
 * in Unix ms: a server's or session's time zone cannot shift it.
 */
export async function insertJournalRow(
  db: SqlExecutor,
  tag: string,
  start: bigint,
  end: bigint,
  entry: RangeJournalEntry,
  cls: { modulus?: number; residue?: number },
): Promise<void> {
  const literal = (value: bigint | number | null | undefined) =>
    value === null || value === undefined ? 'NULL' : BigInt(value).toString();
  await db.query(
    `INSERT INTO leaf_alloc_journal (biz_tag, start_id, end_id, leaf_mode, instance, term, id_modulus, id_residue, granted_at) VALUES (?, ${literal(start)}, ${literal(end)}, ?, ?, ${literal(entry.term)}, ${literal(cls.modulus)}, ${literal(cls.residue)}, ${literal(Date.now())})`,
    [tag, entry.mode, entry.instance.slice(0, MAX_INSTANCE_LENGTH)],
  );
}

interface RawGrant {
  tag: string;
  start_id: string;
  end_id: string;
  leaf_mode: string;
  instance: string;
  term: string | null;
  id_modulus: number | string | null;
  id_residue: number | string | null;
  granted_at: number | string;
}

/**
 * The journal's newest range of `tag` holding `id` (`start_id <= id < end_id`; the index
 * `(biz_tag, start_id)` is walked down from `id`), or `null`.
 */
export async function selectGrant(
  db: SqlExecutor,
  tag: string,
  id: bigint,
): Promise<RangeGrant | null> {
  if (id < 0n) return null;
  const value = id.toString();
  const [row] = (await db.query(
    `SELECT biz_tag AS tag, CAST(start_id AS CHAR) AS start_id, CAST(end_id AS CHAR) AS end_id, leaf_mode, instance, CAST(term AS CHAR) AS term, id_modulus, id_residue, CAST(granted_at AS CHAR) AS granted_at FROM leaf_alloc_journal WHERE biz_tag = ? AND start_id <= ${value} AND end_id > ${value} ORDER BY start_id DESC, id DESC LIMIT 1`,
    [tag],
  )) as RawGrant[];
  if (!row) return null;
  return {
    tag: row.tag,
    start: exactBigint(row.start_id),
    end: exactBigint(row.end_id),
    mode: row.leaf_mode === 'sequence' ? 'sequence' : 'segment',
    instance: row.instance,
    term: row.term === null ? null : exactBigint(row.term),
    grantedAt: new Date(Number(row.granted_at)),
    ...classOf(row),
  };
}

/** A decimal string (or an exact bigint) as bigint; anything else is refused, never rounded. */
function exactBigint(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw new Error(`leaf_alloc.max_id arrived as ${typeof value} ${String(value)}, not as text`);
}

/**
 * `update_time` as a Date: the MySQL driver already gives one; SQLite gives its
 * `CURRENT_TIMESTAMP` text, `YYYY-MM-DD HH:MM:SS` in UTC.
 */
function timeOf(value: Date | string | null): Date | null {
  if (value === null || value instanceof Date) return value;
  const zoned = /(Z|[+-]\d\d:?\d\d)$/i.test(value);
  const time = new Date(zoned ? value : `${value.replace(' ', 'T')}Z`);
  return Number.isNaN(time.getTime()) ? null : time;
}

/** A QueryRunner's `query` with TypeORM's structured result (it carries `affected`). */
export interface StructuredSqlExecutor {
  query(
    sql: string,
    parameters: unknown[],
    useStructuredResult: true,
  ): Promise<{ affected?: number }>;
}

/**
 * A hand-back as ONE guarded statement: `max_id = newMaxId` only where `max_id` is still
 * `expectedMaxId` (checked by {@link checkHandBack} first: never up, never negative). The
 * values are checked bigints written as digit literals (better-sqlite3 would bind a JS
 * number as a REAL; a bigint as a literal is exact on both databases).
 *
 * `mark` (the dialect's) marks the statement on the same connection as Leaf's hand-back from
 * `expectedMaxId`: the trigger of `GuardLeafAllocMaxId` refuses any other update that lowers
 * `max_id`.
 * @returns true when the row was lowered.
 */
export async function handBackRow(
  runner: StructuredSqlExecutor,
  tag: string,
  expectedMaxId: bigint,
  newMaxId: bigint,
  mark: SqlDialect['handBackMark'] = null,
): Promise<boolean> {
  if (!checkHandBack(tag, expectedMaxId, newMaxId)) return false;
  if (mark) await runner.query(...mark.set(expectedMaxId), true);
  try {
    const result = await runner.query(
      `UPDATE leaf_alloc SET max_id = ${newMaxId.toString()}, update_time = CURRENT_TIMESTAMP WHERE biz_tag = ? AND max_id = ${expectedMaxId.toString()}`,
      [tag],
      true,
    );
    return result.affected === 1;
  } finally {
    if (mark?.clear) await runner.query(mark.clear, [], true);
  }
}
