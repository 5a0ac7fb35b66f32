import { monotonicMs } from '../../core/leaf-observer';
import type { SequenceForwardTransport } from '../../core/sequence/forward-batcher';

/**
 * What this instance knows of the issuers it forwards to, for readiness (docs/design.md,
 * "Sequence mode", reachability): which do not answer, since when, and which groups each
 * said it issues for.
 */
export class IssuerReachability {
  /** Issuer addresses whose last batch could not be delivered, with since when (monotonic). */
  private readonly unreachable = new Map<string, number>();
  private readonly probing = new Set<string>();
  /**
   * Per issuer address, the groups it said it issues for at its last probe (every round), less
   * those it refused a forwarded call for since.
   */
  private readonly serving = new Map<string, Set<number>>();

  /** A forwarded batch reached `address`. */
  delivered(address: string): void {
    this.unreachable.delete(address);
  }

  /** A forwarded batch to `address` could not be delivered. */
  undelivered(address: string): void {
    if (!this.unreachable.has(address)) this.unreachable.set(address, monotonicMs());
  }

  /**
   * `address` refused a call of `group`: it starts issuing, or hands over, so it does not serve
   * the group until its probe says otherwise.
   */
  refused(address: string, group: number): void {
    this.serving.get(address)?.delete(group);
  }

  /** The issuers whose last batch or probe did not get through. */
  unreachableIssuers(): string[] {
    return [...this.unreachable.keys()];
  }

  isUnreachable(address: string): boolean {
    return this.unreachable.has(address);
  }

  /** True when `address` said at its last probe that it issues for `group`. */
  serves(address: string, group: number): boolean {
    return this.serving.get(address)?.has(group) ?? false;
  }

  /**
   * Asks every issuer this instance forwards to which groups it issues for now (readiness
   * follows; one request per issuer per round). One that does not answer is unreachable until
   * it does, or until a batch gets through. Issuers replaced meanwhile are forgotten.
   */
  probe(issuers: ReadonlySet<string>, probe: SequenceForwardTransport['probe'] | undefined): void {
    for (const known of [this.unreachable, this.serving]) {
      for (const address of known.keys()) if (!issuers.has(address)) known.delete(address);
    }
    if (!probe) return;
    for (const address of issuers) {
      if (this.probing.has(address)) continue;
      this.probing.add(address);
      probe(address)
        .then(
          ({ serving }) => {
            this.delivered(address);
            this.serving.set(address, new Set(serving));
          },
          () => this.undelivered(address),
        )
        .finally(() => this.probing.delete(address));
    }
  }
}
