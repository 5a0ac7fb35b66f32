/**
 * The fault controls of the in-memory lease stores: {@link failWith} makes every call fail (a
 * database cut off); {@link stall} holds every call until {@link resume} (a database that
 * stalls; the calls are then applied in order, as late answers). Each call passes
 * {@link gate} first.
 */
export abstract class InMemoryFaults {
  private failure: Error | null = null;
  private stalled: Array<() => void> | null = null;

  /** Makes every call fail with `error` (`null`: succeed again). */
  failWith(error: Error | null): void {
    this.failure = error;
  }

  /** Holds every call from now on until {@link resume}. */
  stall(): void {
    this.stalled ??= [];
  }

  /** Lets the held calls run, in order. */
  resume(): void {
    const held = this.stalled ?? [];
    this.stalled = null;
    for (const release of held) release();
  }

  /** Waits while calls are held, then fails as {@link failWith} said. */
  protected async gate(): Promise<void> {
    if (this.stalled) await new Promise<void>((resolve) => this.stalled!.push(resolve));
    if (this.failure) throw this.failure;
  }
}
