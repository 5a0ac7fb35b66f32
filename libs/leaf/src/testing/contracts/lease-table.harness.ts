import type { FakeClock } from '../fake-clock';

/** What a lease table's contract needs besides the table itself (rows of type `Row`). */
export interface LeaseTableHarness<Row> {
  /** Lets `ms` pass on the table's clock (real time for a database). */
  elapse(ms: number): Promise<void>;
  /** Writes `row` of namespace `name` as it is (an epoch beyond 2^53, say). */
  insertRow(name: string, row: Row): Promise<void>;
  /** Releases what `open` acquired (runs once, after every case). */
  close(): Promise<void>;
}

/** The {@link LeaseTableHarness} of an in-memory table on `clock`: rows seeded, nothing to close. */
export function inMemoryLeaseTableHarness<Row>(
  clock: FakeClock,
  table: { seed(name: string, row: Row): void },
): LeaseTableHarness<Row> {
  return {
    elapse: async (ms) => clock.advance(ms),
    insertRow: async (name, row) => table.seed(name, row),
    close: async () => undefined,
  };
}
