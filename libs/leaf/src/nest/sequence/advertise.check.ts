import type { Logger } from '@nestjs/common';
import { monotonicMs } from '../../core/leaf-observer';
import type { SequenceForwardTransport } from '../../core/sequence/forward-batcher';
import { messageOf } from '../../core/errors/leaf.error';

/** How long the advertised address may fail its check before it is reported (listen comes later). */
const ADVERTISE_GRACE_MS = 10_000;

/**
 * Checks, until it passes, that the advertised address reaches this instance: asked before
 * the app listens, it fails at first, so a failure is reported only after a grace period.
 */
export class AdvertiseCheck {
  private passed: boolean;
  /** When the first check was sent (monotonic), whether its failure was reported, one in flight. */
  private since: number | null = null;
  private reported = false;
  private inFlight = false;

  /**
   * @param advertise the address other instances forward to (`sequence.advertise`).
   * @param run this process's identity, as the probe route answers it.
   * @param probe the transport's probe; without one the address is taken as given.
   */
  constructor(
    private readonly advertise: string,
    private readonly run: string,
    private readonly probe: SequenceForwardTransport['probe'] | undefined,
    private readonly logger: Logger,
  ) {
    this.passed = probe === undefined;
  }

  /** True once the address answered as this instance: its groups stand for election only then. */
  get checked(): boolean {
    return this.passed;
  }

  /** One check, unless it passed already or one is in flight (called every round). */
  check(): void {
    const probe = this.probe;
    if (this.passed || !probe || this.inFlight) return;
    const since = (this.since ??= monotonicMs());
    this.inFlight = true;
    const report = (problem: string) => {
      if (this.reported || monotonicMs() - since < ADVERTISE_GRACE_MS) return;
      this.reported = true;
      this.logger.error(
        `[LEAF_SEQUENCE_ADVERTISE_UNREACHABLE] Sequence mode: the advertised address ${this.advertise} ` +
          `(LEAF_SEQUENCE_ADVERTISE) does not reach this instance: ${problem}. Other instances could not forward ` +
          'to it, so it does not stand for election; it forwards its own calls. Set LEAF_SEQUENCE_ADVERTISE to an ' +
          'address the other instances reach this one at (docs/operations.md, "Sequence mode").',
      );
    };
    probe(this.advertise)
      .then(
        ({ run }) => {
          if (run === this.run) {
            this.passed = true;
            this.logger.log(
              `Sequence mode: ${this.advertise} reaches this instance; standing for election`,
            );
          } else {
            report(`another instance (${run}) answers there`);
          }
        },
        (error: unknown) => report(messageOf(error)),
      )
      .finally(() => (this.inFlight = false));
  }
}
