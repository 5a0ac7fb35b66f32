import { GAPLESS_GENESIS } from '../core/gapless/gapless-chain';
import type { GaplessSeries } from '../core/gapless/gapless-series';
import type {
  GaplessChainHead,
  GaplessCounter,
  GaplessLock,
  GaplessNumberRow,
  GaplessRecord,
  GaplessSnapshot,
  GaplessStore,
} from '../core/gapless/gapless-store.port';
import { GaplessSeriesExistsError, GaplessSeriesNotFoundError } from '../core/errors/gapless.error';

interface SeriesState {
  readonly series: GaplessSeries;
  head: GaplessChainHead;
  readonly counters: Map<string, bigint>;
  /** By `period:number`. */
  readonly numbers: Map<string, GaplessNumberRow>;
  readonly byKey: Map<string, string>;
  readonly records: GaplessRecord[];
  /** The tail of the series' lock queue. */
  lock: Promise<void>;
}

const at = (periodKey: string, number: bigint) => `${periodKey}:${number}`;
const copy = (row: GaplessNumberRow): GaplessNumberRow => ({ ...row });

/**
 * A {@link GaplessStore} in memory, for unit tests: one lock per series (a queue), writes
 * applied only when the work resolves (a rejected work leaves nothing), a clock the test
 * owns (`now`, epoch ms: the "database's" clock).
 */
export class InMemoryGaplessStore implements GaplessStore {
  private readonly state = new Map<string, SeriesState>();

  constructor(readonly now: () => number = () => Date.now()) {}

  createSeries(series: Omit<GaplessSeries, 'createdAt'>): Promise<GaplessSeries> {
    if (this.state.has(series.name))
      return Promise.reject(new GaplessSeriesExistsError(series.name));
    const stored = { ...series, createdAt: this.now() };
    this.state.set(series.name, {
      series: stored,
      head: GAPLESS_GENESIS,
      counters: new Map(),
      numbers: new Map(),
      byKey: new Map(),
      records: [],
      lock: Promise.resolve(),
    });
    return Promise.resolve(stored);
  }

  listSeries(): Promise<GaplessSeries[]> {
    const names = [...this.state.keys()].sort();
    return Promise.resolve(names.map((name) => this.state.get(name)!.series));
  }

  findSeries(name: string): Promise<GaplessSeries | null> {
    return Promise.resolve(this.state.get(name)?.series ?? null);
  }

  async withLock<T>(series: string, work: (lock: GaplessLock) => Promise<T>): Promise<T> {
    const state = this.state.get(series);
    if (!state) throw new GaplessSeriesNotFoundError(series);
    const before = state.lock;
    let release!: () => void;
    state.lock = new Promise((resolve) => (release = resolve));
    await before;
    try {
      const writes: Array<() => void> = [];
      const result = await work(this.lockOf(state, writes));
      for (const write of writes) write();
      return result;
    } finally {
      release();
    }
  }

  hasExpired(series: string): Promise<boolean> {
    const now = this.now();
    const rows = [...(this.state.get(series)?.numbers.values() ?? [])];
    return Promise.resolve(
      rows.some(
        (row) => row.state === 'reserved' && row.expiresAt !== null && row.expiresAt <= now,
      ),
    );
  }

  snapshot<T>(work: (view: GaplessSnapshot) => Promise<T>): Promise<T> {
    return work(this);
  }

  readNumbers(
    series: string,
    after: { periodKey: string; number: bigint } | null,
    limit: number,
  ): Promise<GaplessNumberRow[]> {
    const rows = [...(this.state.get(series)?.numbers.values() ?? [])]
      .filter(
        (row) =>
          after === null ||
          row.periodKey > after.periodKey ||
          (row.periodKey === after.periodKey && row.number > after.number),
      )
      .sort((a, b) =>
        a.periodKey !== b.periodKey
          ? a.periodKey < b.periodKey
            ? -1
            : 1
          : a.number < b.number
            ? -1
            : a.number > b.number
              ? 1
              : 0,
      );
    return Promise.resolve(rows.slice(0, limit).map(copy));
  }

  readRecords(series: string, afterSeq: bigint, limit: number): Promise<GaplessRecord[]> {
    const records = this.state.get(series)?.records ?? [];
    return Promise.resolve(records.filter((record) => record.seq > afterSeq).slice(0, limit));
  }

  readCounters(series: string): Promise<GaplessCounter[]> {
    const counters = [...(this.state.get(series)?.counters ?? [])];
    return Promise.resolve(counters.map(([periodKey, last]) => ({ periodKey, last })));
  }

  /**
   * Changes a stored record or number behind the store's back (`mutate` gets the live
   * state), as tampering or a faulty write would, for tests of `verify`.
   */
  tamper(
    series: string,
    mutate: (state: { numbers: Map<string, GaplessNumberRow>; records: GaplessRecord[] }) => void,
  ): void {
    mutate(this.state.get(series)!);
  }

  private lockOf(state: SeriesState, writes: Array<() => void>): GaplessLock {
    const now = this.now();
    const series = state.series.name;
    return {
      series: state.series,
      now,
      head: state.head,
      read: (keys, periodKey) =>
        Promise.resolve({
          rows: keys.flatMap((key) => {
            const id = state.byKey.get(key);
            return id === undefined ? [] : [copy(state.numbers.get(id)!)];
          }),
          last: (periodKey !== null && state.counters.get(periodKey)) || 0n,
        }),
      expiredRows: (limit) =>
        Promise.resolve(
          [...state.numbers.values()]
            .filter((row) => row.state === 'reserved' && row.expiresAt! <= now)
            .slice(0, limit)
            .map(copy),
        ),
      write: (changes) => {
        writes.push(() => {
          this.insert(state, changes.created);
          for (const row of changes.settled)
            state.numbers.set(at(row.periodKey, row.number), copy(row));
          if (changes.counter) state.counters.set(changes.counter.periodKey, changes.counter.last);
          const { records } = changes;
          if (records.length === 0) return;
          if (records[0]!.seq !== state.head.seq + 1n)
            throw new Error(`${series}: record ${records[0]!.seq} does not follow the head`);
          state.records.push(...records);
          state.head = records[records.length - 1]!;
        });
        return Promise.resolve();
      },
    };
  }

  private insert(state: SeriesState, rows: readonly GaplessNumberRow[]): void {
    for (const row of rows) {
      const id = at(row.periodKey, row.number);
      if (state.numbers.has(id) || (row.key !== null && state.byKey.has(row.key)))
        throw new Error(`${state.series.name}: duplicate number ${id} or key ${row.key}`);
      state.numbers.set(id, copy(row));
      if (row.key !== null) state.byKey.set(row.key, id);
    }
  }
}
