/**
 * The writes of a gapless batch on PostgreSQL (docs/gapless.md, "Design"): one statement of
 * data-modifying CTEs over one JSON value — the numbers taken, the numbers settled, the
 * counter, the records and the chain head — so a batch writes in one round trip whatever its
 * size. Written in MySQL's form (`?`) like `gapless.sql.ts`.
 */
import type { GaplessChanges, GaplessNumberRow } from '../../core/gapless/gapless-store.port';
import { postgresLiteral } from './postgres.dialect';

/** Each write, a CTE reading its part of `d.j` (included when the part is not empty). */
const POSTGRES_WRITES = {
  created: `INSERT INTO leaf_gapless_number (series, period_key, number, idem_key, state, reason, reserved_at, expires_at, settled_at) SELECT d.series, x.p, x.n, x.k, x.s, x.r, x.ra, x.ea, x.sa FROM d, jsonb_to_recordset(d.j -> 'created') AS x(p varchar, n bigint, k varchar, s varchar, r varchar, ra bigint, ea bigint, sa bigint)`,
  settled: `UPDATE leaf_gapless_number t SET state = x.s, reason = x.r, settled_at = x.sa, expires_at = NULL FROM d, jsonb_to_recordset(d.j -> 'settled') AS x(p varchar, n bigint, s varchar, r varchar, sa bigint) WHERE t.series = d.series AND t.period_key = x.p AND t.number = x.n`,
  counted: `UPDATE leaf_gapless_counter t SET last_number = x.n FROM d, jsonb_to_recordset(d.j -> 'counted') AS x(p varchar, n bigint) WHERE t.series = d.series AND t.period_key = x.p`,
  uncounted: `INSERT INTO leaf_gapless_counter (series, period_key, last_number) SELECT d.series, x.p, x.n FROM d, jsonb_to_recordset(d.j -> 'uncounted') AS x(p varchar, n bigint)`,
  records: `INSERT INTO leaf_gapless_record (series, seq, period_key, number, action, reason, idem_key, at, prev_hash, hash) SELECT d.series, x.q, x.p, x.n, x.a, x.r, x.k, x.t, x.ph, x.h FROM d, jsonb_to_recordset(d.j -> 'records') AS x(q bigint, p varchar, n bigint, a varchar, r varchar, k varchar, t bigint, ph varchar, h varchar)`,
  head: `UPDATE leaf_gapless_series t SET last_seq = CAST(d.j ->> 'seq' AS bigint), last_hash = d.j ->> 'hash' FROM d WHERE t.name = d.series`,
} as const;

/** A number as {@link POSTGRES_WRITES} reads it (a settled one's extra fields ignored). */
const numberJson = (row: GaplessNumberRow) => ({
  p: row.periodKey,
  n: `${row.number}`,
  k: row.key,
  s: row.state,
  r: row.reason,
  ra: row.reservedAt,
  ea: row.expiresAt,
  sa: row.settledAt,
});

/** One batch's write. */
export interface PostgresBatchWrite {
  readonly sql: string;
  readonly parameters: [series: string, json: string];
  /** The statement with its values as escaped literals, for a simple query. */
  inlined(): string;
}

/**
 * The write of `changes` to `series`; `counted`: the periods whose counter row exists (updated;
 * the others inserted).
 */
export function postgresBatchWrite(
  series: string,
  changes: GaplessChanges,
  counted: ReadonlySet<string>,
): PostgresBatchWrite {
  const last = changes.records[changes.records.length - 1];
  const counters = changes.counters.map(({ periodKey, last }) => ({
    p: periodKey,
    n: `${last}`,
  }));
  const data = {
    created: changes.created.map(numberJson),
    settled: changes.settled.map(numberJson),
    counted: counters.filter((counter) => counted.has(counter.p)),
    uncounted: counters.filter((counter) => !counted.has(counter.p)),
    records: changes.records.map((record) => ({
      q: `${record.seq}`,
      p: record.periodKey,
      n: `${record.number}`,
      a: record.action,
      r: record.reason,
      k: record.key,
      t: record.at,
      ph: record.prevHash,
      h: record.hash,
    })),
    seq: last ? `${last.seq}` : null,
    hash: last?.hash ?? null,
  };
  const writes = (Object.keys(POSTGRES_WRITES) as Array<keyof typeof POSTGRES_WRITES>)
    .filter((part) => (part === 'head' ? last : data[part].length > 0))
    .map((part) => `${part} AS (${POSTGRES_WRITES[part]})`);
  const sql = `WITH d AS (SELECT CAST(? AS varchar) AS series, CAST(? AS jsonb) AS j), ${writes.join(', ')} SELECT 1 AS written`;
  const parameters: [string, string] = [series, JSON.stringify(data)];
  return {
    sql,
    parameters,
    // The statement holds no `?` but its two placeholders.
    inlined: () => {
      const [head, beforeJson, tail] = sql.split('?');
      return `${head}${postgresLiteral(series)}${beforeJson}${postgresLiteral(parameters[1])}${tail}`;
    },
  };
}
