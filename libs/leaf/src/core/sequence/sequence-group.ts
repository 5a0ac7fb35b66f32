import { ZkError, type ZkClient } from '../zookeeper/zk-client.port';
import { ElectionLine } from './election-line';
import { IssuingGroup, type IssuingWith } from './issuing-group';
import type { SequenceGroupOptions } from './sequence-group.options';

/**
 * One issuer group of sequence mode on one instance: its ZooKeeper election and, while this
 * instance is elected, the issuing itself (docs/design.md, "Sequence mode").
 *
 * - Election: every instance keeps an ephemeral sequential node under `root`; the one with
 *   the lowest sequence is the issuer. {@link tick} (called periodically) joins, watches and
 *   renews; a node that is gone (session expired) demotes at once and joins again.
 * - Lease: the election itself and every heartbeat are a `setData` on the issuer's own node,
 *   whose send time bounds the session's life ({@link IssuerLease}).
 * - Terms and issue: each election starts a term of its own ({@link IssuingTerm}).
 * - Young sessions: a term issues only once the ZooKeeper session it was elected in is a
 *   session timeout old, so that an issuer elected by a ZooKeeper that lost its data never
 *   overlaps a predecessor that ZooKeeper forgot.
 * - Handing over: an issuer whose allocations keep failing, or that issues more than its share
 *   of the groups, stops issuing and joins again at the end of the line.
 */
export class SequenceGroup extends IssuingGroup {
  private readonly line: ElectionLine;
  private readonly unsubscribe: () => void;
  /** When the current ZooKeeper session was first seen connected (monotonic), or null. */
  private sessionSince: number | null;

  constructor(
    private readonly zk: ZkClient,
    protected override readonly options: SequenceGroupOptions,
    using: IssuingWith,
  ) {
    super(options, using);
    this.line = new ElectionLine(zk, options, using.monotonic);
    // A session already open has an unknown age: counted from now.
    this.sessionSince = zk.connected ? using.monotonic() : null;
    this.unsubscribe = zk.onStateChange((state) => {
      if (state === 'connected') {
        this.sessionSince ??= this.monotonic();
      } else if (state === 'disconnected') {
        // A session that comes back may come back to a ZooKeeper restored from a snapshot
        // that still held it: its age is counted again from the reconnection.
        this.sessionSince = null;
      } else if (state === 'expired') {
        this.line.sessionExpired();
        this.sessionSince = null;
        this.issuer.demote('the ZooKeeper session expired');
      }
    });
  }

  /** True while the ZooKeeper session is connected. */
  override get reachable(): boolean {
    return this.zk.connected;
  }

  /** Deletes the election node: the successor need not wait for the session to expire. */
  protected override async release(): Promise<void> {
    // Where this fails (gone already, ZooKeeper unreachable), the session's end removes it.
    if (this.line.node !== null) await this.line.leave(this.line.node);
    this.unsubscribe();
  }

  protected override leaderSeen(): string | null {
    return this.line.leader?.address ?? null;
  }

  protected override candidates(): number {
    return this.line.candidates;
  }

  /**
   * Joins if needed, then as issuer renews the lease, as candidate looks at who is first.
   */
  protected override async round(): Promise<void> {
    if (this.state === 'resigning') return;
    if (!this.zk.connected) return; // the lease runs down by itself
    try {
      const joining = this.line.node === null;
      if (this.state === 'stopped' || (joining && this.options.eligible?.() === false)) {
        await this.line.lookForIssuer();
        return;
      }
      if (joining) await this.line.join();
      const node = this.line.node!;
      if (this.state === 'issuer') {
        await this.confirm(node, () => undefined);
        const children = await this.line.look();
        const reason = await this.handOverReason(children);
        if (reason === null) return;
        // Stops issuing, then leaves the line: the next in line is elected at its next round;
        // this instance joins again at the end.
        this.issuer.demote(`handed over: ${reason}`);
        if (this.line.node !== null) await this.line.leave(this.line.node);
        return;
      }
      const children = await this.line.look();
      const mine = this.line.name!;
      if (!children.includes(mine)) {
        this.line.node = null;
        return;
      }
      if (children[0] === mine) {
        const next = await this.line.matureNext(children);
        if (next !== null && this.options.balance?.full(next)) {
          // This instance issues its share already: the group goes to the next in line.
          await this.line.leave(node);
          return;
        }
        // Every earlier node is gone: its session ended (its lease ran out first) or it
        // resigned (it stopped issuing first). The confirming write starts our lease.
        await this.confirm(node, () => this.elect());
        return;
      }
      const first = children[0]!;
      if (this.line.isOurs(first)) {
        // A node of an earlier join of ours whose answer was lost: it would hold the group
        // for this session forever. Remove it; the next round looks again.
        await this.line.remove(first);
        return;
      }
      await this.line.learnLeader(first);
    } catch (error) {
      if (
        error instanceof ZkError &&
        (error.zkCode === 'NO_NODE' || error.zkCode === 'SESSION_EXPIRED')
      ) {
        this.line.node = null;
        this.issuer.demote('the election node is gone (session expired)');
      }
      // Other failures (connection loss, timeouts): the lease runs down; the next round retries.
    }
  }

  /** A heartbeat write on our own node; on success the lease reaches from its send time. */
  private async confirm(node: string, then: () => void): Promise<void> {
    const sentAt = this.monotonic();
    const sentAtWall = this.clock.now();
    await this.zk.setData(node, this.line.data());
    if (this.line.node !== node || this.state === 'stopped' || this.state === 'resigning') return;
    then();
    const granted = this.zk.negotiatedSessionTimeoutMs ?? Number.POSITIVE_INFINITY;
    this.issuer.confirm(sentAt, Math.min(granted, this.options.sessionTimeoutMs), sentAtWall);
  }

  private elect(): void {
    this.line.leader = null; // this instance is elected
    // docs/design.md, "A ZooKeeper that forgot": an issuer ZooKeeper no longer knows of stops
    // within a session timeout of its last heartbeat, which preceded this session.
    const issuableFrom = (this.sessionSince ?? this.monotonic()) + this.options.freshSessionWaitMs;
    this.issuer.elect(this.issuer.term + 1, issuableFrom, null);
  }

  /** Why the issuer should hand the group over now, or null. */
  private async handOverReason(children: string[]): Promise<string | null> {
    if (this.state !== 'issuer' || children.length < 2) return null;
    const failing = this.issuer.failing.handOverReason();
    if (failing !== null) return failing;
    if (!this.options.balance) return null;
    const next = await this.line.matureNext(children);
    if (next !== null && this.state === 'issuer' && this.options.balance.over(next)) {
      return 'it issues more than its share of the groups';
    }
    return null;
  }
}
