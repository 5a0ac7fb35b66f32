/**
 * The database's clock as this instance knows it: readings of the database's `now` taken
 * with the local monotonic time around the round trip, and the bounds they give on the
 * database's `now` later on (docs/design.md, "Business numbers"). The database's clock, not
 * the host's, decides which period a business number belongs to: every instance reads the
 * same clock.
 */

/** One reading: the database's `now` and the local monotonic times around the query. */
export interface ClockReading {
  /** The database's `now`, epoch milliseconds. */
  readonly databaseMs: number;
  /** Local monotonic time the query was sent at. */
  readonly sentAt: number;
  /** Local monotonic time the answer arrived at. */
  readonly receivedAt: number;
}

/**
 * Where the database's clock stands at local monotonic time `at`, from `reading`: the
 * database evaluated `now` between sending and receiving, so since then its clock advanced by
 * at least `at − receivedAt` and at most `at − sentAt` (± the margin).
 */
export function databaseNowBounds(reading: ClockReading, at: number, marginMs: number) {
  return {
    low: reading.databaseMs + (at - reading.receivedAt) - marginMs,
    high: reading.databaseMs + (at - reading.sentAt) + marginMs,
  };
}

/**
 * Readings of the database's clock: the newest is reused while younger than `maxAgeMs`;
 * concurrent callers share one query in flight.
 */
export class DatabaseClock {
  private last: ClockReading | null = null;
  private pending: Promise<ClockReading> | null = null;

  constructor(
    /** The database's `now` in epoch milliseconds (one statement). */
    private readonly read: () => Promise<number>,
    private readonly monotonic: () => number,
    /**
     * A reading is used for this long after it was sent, then read again: the local clock's
     * rate drift is only trusted over this span.
     */
    private readonly maxAgeMs: number,
  ) {}

  /** The newest reading still usable at local monotonic time `at`, or `null`. */
  current(at: number = this.monotonic()): ClockReading | null {
    const last = this.last;
    return last !== null && at - last.sentAt < this.maxAgeMs ? last : null;
  }

  /**
   * A reading sent at or after `notBefore` (local monotonic; default: any usable one).
   * @throws what the database's read threw.
   */
  async reading(notBefore = -Infinity): Promise<ClockReading> {
    for (;;) {
      const usable = this.current();
      if (usable !== null && usable.sentAt >= notBefore) return usable;
      const reading = await (this.pending ?? this.query());
      if (reading.sentAt >= notBefore) return reading;
    }
  }

  private query(): Promise<ClockReading> {
    const sentAt = this.monotonic();
    const pending = this.read()
      .then((databaseMs) => {
        const reading = { databaseMs, sentAt, receivedAt: this.monotonic() };
        if (this.last === null || reading.sentAt >= this.last.sentAt) this.last = reading;
        return reading;
      })
      .finally(() => {
        if (this.pending === pending) this.pending = null;
      });
    this.pending = pending;
    return pending;
  }
}
