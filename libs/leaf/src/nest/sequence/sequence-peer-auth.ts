import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { UnauthorizedError } from '../../core/errors/unauthorized.error';
import { PeerSigner } from '../../core/http/peer-signature';
import { PeerVerifier, type PeerRequest, type PeerVerdict } from '../../core/http/peer-verifier';
import { LEAF_RESOLVED_OPTIONS } from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { modeOptions } from '../leaf-modes';

/** At most one warning about refused requests per this long. */
const REPORT_INTERVAL_MS = 60_000;

/**
 * Who may call the internal routes of sequence mode (docs/security.md, "Peers"): with
 * `sequence.clusterSecret`, only a request signed with one of its secrets, within the window,
 * not seen before ({@link PeerVerifier}); without it anyone, with a warning at start. One per
 * module: the nonces seen are remembered here. `SequencePeerGuard` asks it for each request.
 */
@Injectable()
export class SequencePeerAuth implements OnModuleInit {
  private readonly logger = new Logger('SequencePeers');
  private readonly verifier: PeerVerifier | null;
  private readonly secrets: readonly string[];
  private readonly now: () => number;
  private readonly refusals = { missing: 0, malformed: 0, expired: 0, forged: 0, replayed: 0 };
  /** Refusals since the last warning, and when that was (the clock's ms). */
  private unreported: Partial<Record<Exclude<PeerVerdict, 'ok'>, number>> = {};
  private reportedAt = Number.NEGATIVE_INFINITY;

  constructor(@Inject(LEAF_RESOLVED_OPTIONS) options: ResolvedLeafOptions) {
    this.secrets = modeOptions(options, 'sequence').clusterSecret;
    this.now = () => options.clock.now();
    this.verifier = this.secrets.length > 0 ? new PeerVerifier(this.secrets, this.now) : null;
  }

  onModuleInit(): void {
    if (this.verifier === null) {
      this.logger.warn(
        'Sequence mode runs without a cluster secret: anyone who reaches this instance can call its internal routes ' +
          '(/api/sequence/internal/*) and draw IDs through them. Set sequence.clusterSecret (the application: ' +
          'LEAF_CLUSTER_SECRET or LEAF_CLUSTER_SECRET_FILE) on every instance (docs/security.md, "Peers").',
      );
    }
  }

  /** Whether the internal routes check signatures (a cluster secret is set). */
  get enabled(): boolean {
    return this.verifier !== null;
  }

  /** Refused requests since start, by reason (the answer is the same for all). */
  get refused(): Readonly<Record<Exclude<PeerVerdict, 'ok'>, number>> {
    return this.refusals;
  }

  /**
   * A warning at most once a minute with the refusals since the last one, by reason: a
   * misconfigured instance (another secret, a clock off) shows up without a line per request.
   */
  private report(verdict: Exclude<PeerVerdict, 'ok'>): void {
    this.unreported[verdict] = (this.unreported[verdict] ?? 0) + 1;
    const now = this.now();
    if (now - this.reportedAt < REPORT_INTERVAL_MS) return;
    this.reportedAt = now;
    const counts = Object.entries(this.unreported)
      .map(([reason, count]) => `${reason} ${count}`)
      .join(', ');
    this.unreported = {};
    this.logger.warn(
      `Refused requests on the internal routes (${counts}) since the last such warning: ` +
        'a caller without the cluster secret, or an instance with another secret or a clock more than 30 s off',
    );
  }

  /** The signer of this instance's own requests to the others, or null without a secret. */
  signer(): PeerSigner | null {
    return this.secrets.length > 0 ? new PeerSigner(this.secrets[0]!, this.now) : null;
  }

  /**
   * Lets `request` through when it is signed as required (always, without a secret).
   * @throws {UnauthorizedError} otherwise; the message names no secret and no reason.
   */
  check(request: PeerRequest): void {
    if (this.verifier === null) return;
    const verdict = this.verifier.verify(request);
    if (verdict === 'ok') return;
    this.refusals[verdict]++;
    this.report(verdict);
    throw new UnauthorizedError(
      'this route is for the other instances of the cluster: a valid peer signature is required',
    );
  }
}
