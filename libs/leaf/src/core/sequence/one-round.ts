/**
 * At most one election round of a group at a time: a round asked for while one runs gets
 * that round's promise. Both elections (ZooKeeper, the database row) drive their rounds
 * through it, and a resignation waits for the round in flight.
 */
export class OneRound {
  private running: Promise<void> | null = null;

  /** Starts `round` unless one runs; resolves when the running round ends. */
  run(round: () => Promise<void>): Promise<void> {
    if (this.running) return this.running;
    const started = round().finally(() => {
      this.running = null;
    });
    this.running = started;
    return started;
  }

  /** Waits for the round in flight, if any; never rejects. */
  async settled(): Promise<void> {
    await this.running?.catch(() => undefined);
  }
}
