import type { IdOrigin } from 'nestjs-leaf/journal';

/**
 * Who issued an ID, on the wire: `GET /admin/ids/{id}` answers it and `leaf ids whois` prints
 * it. IDs, range bounds, terms and epochs as decimal strings; times as ISO 8601 (UTC).
 */
export interface IdOriginJson {
  id: string;
  mode: 'segment' | 'sequence' | 'snowflake';
  /** Segment and sequence: the tag; snowflake: `null`. */
  tag: string | null;
  /** Segment and sequence: the range `[start, end)` granted; snowflake: `null`. */
  start: string | null;
  end: string | null;
  /** Who issued it (the instance's journal identity; ZooKeeper: the worker node's `ip:port`); `null`: not recorded. */
  instance: string | null;
  /** The sequence issuer's term (database election). */
  term: string | null;
  /** When the range was granted. */
  grantedAt: string | null;
  /** The database that granted the range, when several serve the tag. */
  database: string | null;
  /** Snowflake: the ID's millisecond, worker ID, data centre and sequence. */
  time: string | null;
  workerId: number | null;
  dataCenterId: number | null;
  sequence: number | null;
  /** Snowflake: where worker IDs come from (`database`, `zookeeper`, `explicit`, `ordinal`). */
  workerSource: string | null;
  /** Snowflake: the holder's advertised address and run, the lease epoch, when it claimed the worker ID, until when it held it. */
  holder: string | null;
  run: string | null;
  epoch: string | null;
  claimedAt: string | null;
  until: string | null;
  note: string | null;
}

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());

/** The JSON of an {@link IdOrigin}: the same fields for every mode, `null` where they do not apply. */
export function idOriginJson(origin: IdOrigin): IdOriginJson {
  // Every field, in the order the answer has always had (id and mode last); the other mode's null.
  const fields = {
    tag: null,
    start: null,
    end: null,
    instance: origin.instance,
    term: null,
    grantedAt: null,
    database: null,
    time: null,
    workerId: null,
    dataCenterId: null,
    sequence: null,
    workerSource: null,
    holder: null,
    run: null,
    epoch: null,
    claimedAt: null,
    until: null,
    note: null,
    id: origin.id.toString(),
    mode: origin.mode,
  };
  if (origin.mode === 'snowflake') {
    return {
      ...fields,
      time: new Date(origin.timestamp).toISOString(),
      workerId: origin.workerId,
      dataCenterId: origin.dataCenterId,
      sequence: origin.sequence,
      workerSource: origin.workerSource,
      holder: origin.holder,
      run: origin.run,
      epoch: origin.epoch === null ? null : origin.epoch.toString(),
      claimedAt: iso(origin.claimedAt),
      until: iso(origin.until),
      note: origin.note,
    };
  }
  return {
    ...fields,
    tag: origin.tag,
    start: origin.start.toString(),
    end: origin.end.toString(),
    term: origin.term === null ? null : origin.term.toString(),
    grantedAt: iso(origin.grantedAt),
    database: origin.database,
  };
}
