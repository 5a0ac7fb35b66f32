/**
 * `verify` (docs/gapless.md, "The journal"): the accounting and the chain of one series,
 * recomputed from its tables in pages.
 */
import { GAPLESS_GENESIS, gaplessRecordHash } from './gapless-chain';
import { existingGaplessSeries } from './gapless-series';
import type {
  GaplessNumberRow,
  GaplessRecord,
  GaplessSnapshot,
  GaplessStore,
} from './gapless-store.port';

/** Rows read per statement. */
const PAGE = 5000;
/** Longest list of numbers a report names (the counts are always exact). */
const MAX_LISTED = 100;

/** What `verify` found. Numbers are named `period:number` (`:17` without a period). */
export interface GaplessReport {
  readonly series: string;
  /** Numbers taken: the sum of the periods' counters. */
  readonly issued: number;
  readonly confirmed: number;
  readonly voided: number;
  /** Reserved, neither confirmed nor voided yet. */
  readonly pending: number;
  /** Numbers up to a counter without a row (first {@link MAX_LISTED}). */
  readonly missing: string[];
  /** Numbers with more than one row, or rows above their period's counter. */
  readonly duplicates: string[];
  /** Voided numbers without a reason. */
  readonly voidsWithoutReason: string[];
  /** Settled numbers whose state is not what their last record says, or that have none. */
  readonly unrecorded: string[];
  readonly records: number;
  /** The first record whose sequence, link or hash is wrong (decimal), if any. */
  readonly chainBrokenAt?: string;
  /** True when nothing above is wrong. */
  readonly ok: boolean;
}

const name = (periodKey: string, number: bigint) => `${periodKey}:${number}`;

function push(list: string[], item: string): void {
  if (list.length < MAX_LISTED) list.push(item);
}

/**
 * Every number from 1 to each period's counter is exactly one of reserved, confirmed or
 * voided; every void has its reason; every settlement is the last record of its number; the
 * chain links from the genesis hash with consecutive `seq` and each hash recomputes.
 * @throws {GaplessSeriesNotFoundError} for an unknown series.
 */
export async function verifyGaplessSeries(store: GaplessStore, series: string) {
  await existingGaplessSeries(store, series);
  return store.snapshot((view) => verifySnapshot(view, series));
}

async function verifySnapshot(view: GaplessSnapshot, series: string): Promise<GaplessReport> {
  const chain = await readChain(view, series);
  const counters = new Map(
    (await view.readCounters(series)).map((counter) => [counter.periodKey, counter.last]),
  );
  const tally = new Tally(counters, chain.lastAction);
  const rows = paged<GaplessNumberRow>((last) => view.readNumbers(series, last ?? null, PAGE));
  for await (const row of rows) tally.add(row);
  return tally.finish(series, chain.count, chain.brokenAt);
}

/** What `read` answers page by page, each page read after the last item of the one before. */
async function* paged<T>(read: (last: T | undefined) => Promise<T[]>): AsyncGenerator<T> {
  let last: T | undefined;
  for (;;) {
    const page = await read(last);
    yield* page;
    if (page.length < PAGE) return;
    last = page[page.length - 1];
  }
}

/** The counts and lists, from the numbers in period and number order. */
class Tally {
  confirmed = 0;
  voided = 0;
  pending = 0;
  readonly missing: string[] = [];
  readonly duplicates: string[] = [];
  readonly voidsWithoutReason: string[] = [];
  readonly unrecorded: string[] = [];
  /** The next number expected in each period seen. */
  private readonly next = new Map<string, bigint>();

  constructor(
    private readonly counters: ReadonlyMap<string, bigint>,
    /** Each recorded number's last action; entries are removed as their numbers are seen. */
    private readonly lastAction: Map<string, string>,
  ) {}

  add(row: GaplessNumberRow): void {
    const label = name(row.periodKey, row.number);
    const expected = this.next.get(row.periodKey) ?? 1n;
    if (row.number < expected || row.number > (this.counters.get(row.periodKey) ?? 0n))
      push(this.duplicates, label);
    for (let n = expected; n < row.number; n++) push(this.missing, name(row.periodKey, n));
    if (row.number >= expected) this.next.set(row.periodKey, row.number + 1n);
    if (row.state === 'reserved') this.pending++;
    else if (row.state === 'confirmed') this.confirmed++;
    else {
      this.voided++;
      if (!row.reason) push(this.voidsWithoutReason, label);
    }
    const settledAs = row.state === 'reserved' ? undefined : SETTLED_AS[row.state];
    if (this.lastAction.get(label) !== settledAs) push(this.unrecorded, label);
    this.lastAction.delete(label);
  }

  finish(series: string, records: number, chainBrokenAt: string | undefined): GaplessReport {
    let issued = 0;
    for (const [periodKey, last] of this.counters) {
      issued += Number(last);
      for (let n = this.next.get(periodKey) ?? 1n; n <= last; n++)
        push(this.missing, name(periodKey, n));
    }
    for (const label of this.lastAction.keys()) push(this.unrecorded, label);
    const { confirmed, voided, pending, missing, duplicates, voidsWithoutReason, unrecorded } =
      this;
    return {
      series,
      issued,
      confirmed,
      voided,
      pending,
      missing,
      duplicates,
      voidsWithoutReason,
      unrecorded,
      records,
      ...(chainBrokenAt === undefined ? {} : { chainBrokenAt }),
      ok:
        missing.length + duplicates.length + voidsWithoutReason.length + unrecorded.length === 0 &&
        chainBrokenAt === undefined,
    };
  }
}

const SETTLED_AS = { confirmed: 'confirm', voided: 'void' } as const;

/** The chain read in pages: its length, each number's last action, the first broken record. */
async function readChain(store: GaplessSnapshot, series: string) {
  const lastAction = new Map<string, string>();
  let head = GAPLESS_GENESIS;
  let count = 0;
  let brokenAt: string | undefined;
  const records = paged<GaplessRecord>((last) =>
    store.readRecords(series, (last ?? GAPLESS_GENESIS).seq, PAGE),
  );
  for await (const record of records) {
    count++;
    const { hash, ...unsigned } = record;
    const intact =
      record.seq === head.seq + 1n &&
      record.prevHash === head.hash &&
      gaplessRecordHash(series, unsigned) === hash;
    if (!intact && brokenAt === undefined) brokenAt = record.seq.toString();
    lastAction.set(name(record.periodKey, record.number), record.action);
    head = record;
  }
  return { count, lastAction, brokenAt };
}
