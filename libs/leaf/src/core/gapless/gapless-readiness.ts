import { AllocationError } from '../errors/allocation.error';
import { LeafError } from '../errors/leaf.error';
import { publicMessage } from '../errors/public-message';

/** Whether an instance can serve gapless series now, and why not. */
export interface GaplessReadinessState {
  readonly ready: boolean;
  /** Why not, `null` when ready. */
  readonly reason: string | null;
}

/**
 * Readiness of gapless series (docs/gapless.md, "Routes, CLI and operations"): down until the store first
 * answered, down from a call that could not reach it until the next one that did, down while
 * shutting down. A typed refusal (a busy lock, an unknown series) proves the store answered.
 */
export class GaplessReadiness {
  private state: GaplessReadinessState = {
    ready: false,
    reason: 'the gapless tables have not been reached yet',
  };
  private stopped = false;

  /** The store answered. */
  reached(): void {
    if (!this.stopped) this.state = { ready: true, reason: null };
  }

  /** A call failed with `error`: down when the store was not reached. */
  failed(error: unknown): void {
    if (error instanceof LeafError && !(error instanceof AllocationError)) return this.reached();
    if (this.stopped) return;
    const why = error instanceof LeafError ? publicMessage(error) : 'the store failed';
    this.state = { ready: false, reason: `the gapless tables cannot be reached: ${why}` };
  }

  /** Shutting down: down for good. */
  stop(): void {
    this.stopped = true;
    this.state = { ready: false, reason: 'shutting down' };
  }

  get current(): GaplessReadinessState {
    return this.state;
  }
}
