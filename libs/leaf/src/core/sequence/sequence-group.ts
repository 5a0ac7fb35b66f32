import type { Clock } from '../clock';
import { AllocationError, AllocationRegressedError } from '../errors/allocation.error';
import { LeafError } from '../errors/leaf.error';
import { SegmentNotReadyError } from '../errors/segment-not-ready.error';
import { SequenceLeaseExpiredError, SequenceNoIssuerError } from '../errors/sequence.error';
import {
  SegmentBuffer,
  type RangeLoader,
  type SegmentBufferOptions,
} from '../segment/segment-buffer';
import { ZkError, type ZkClient } from '../zookeeper/zk-client.port';
import { IssuerLease } from './issuer-lease';

/**
 * Where a group is in its life: `candidate` (its node is not the first; another instance
 * issues, or none yet), `issuer` (elected, issuing while its lease holds), `resigning`
 * (stopped issuing, deleting its node), `stopped` (closed).
 */
export type SequenceGroupState = 'candidate' | 'issuer' | 'resigning' | 'stopped';

/** Settings of one {@link SequenceGroup}. */
export interface SequenceGroupOptions {
  /** The group's election directory, e.g. `/sequence/leaf/groups/0`. */
  readonly root: string;
  /** Label of the group in errors and metrics. */
  readonly group: number;
  /** Where other instances forward this group's calls while this one issues. */
  readonly address: string;
  /** Unique per process: names this process's election nodes. */
  readonly run: string;
  /** The requested ZooKeeper session timeout (the granted one is used when smaller). */
  readonly sessionTimeoutMs: number;
  /** Subtracted from every lease bound (see {@link IssuerLease}). */
  readonly leaseMarginMs: number;
  /**
   * How old the ZooKeeper session must be before a term elected in it issues (the session
   * timeout; docs/design.md, "A ZooKeeper that forgot"). Only unit tests of other rules set 0.
   */
  readonly freshSessionWaitMs: number;
  /** The per-key buffers of a term (segment mode's settings). */
  readonly buffer: SegmentBufferOptions;
  /**
   * An issuer whose buffer ran dry and whose allocations have failed this long hands the group
   * over (when another candidate waits), as one that cannot renew its lease does.
   */
  readonly resignAfterFailingMs: number;
  /** Fair shares of the groups among the instances (see {@link SequenceBalance}); none: no balancing. */
  readonly balance?: SequenceBalance;
  /** False while this instance must not stand for election (its address is not checked yet). */
  readonly eligible?: () => boolean;
}

/**
 * How many groups this instance issues for, against its fair share: one group each for the
 * instances at the least, `ceil(groups / instances)` at the most.
 */
export interface SequenceBalance {
  /**
   * True when the instance at `next` (the next in line) issues fewer groups than this one: a
   * free group goes to it first.
   */
  full(next: string): boolean;
  /**
   * True when this instance issues at least two more groups than the one at `next`, and may
   * hand one over now (at most one per instance per round, once it knows every group's issuer).
   */
  over(next: string): boolean;
}

/** Told of a group's changes (metrics, logs); never on the hot path. */
export interface SequenceGroupListener {
  /** This instance became the issuer (a new term). */
  elected?(group: number, term: number): void;
  /** This instance stopped being the issuer, with why. */
  demoted?(group: number, reason: string): void;
}

/** Monitoring view of a group. */
export interface SequenceGroupSnapshot {
  readonly group: number;
  readonly state: SequenceGroupState;
  readonly term: number;
  /** The issuer's address as this instance knows it (itself while issuing), or null. */
  readonly issuer: string | null;
  /** Milliseconds of lease left while issuing, else null. */
  readonly leaseRemainingMs: number | null;
  /**
   * Elected, but waiting this long before its first ID: its ZooKeeper session is younger than
   * the session timeout (docs/design.md, "A ZooKeeper that forgot"); else null.
   */
  readonly startsInMs: number | null;
  /** Election nodes in the group at the last look (about the instances taking part). */
  readonly candidates: number;
  readonly elections: number;
}

/** What an election node carries. */
interface NodeData {
  readonly address: string;
  readonly run: string;
}

const SEQUENCE_DIGITS = 10;

/**
 * One issuer group of sequence mode on one instance: its ZooKeeper election and, while this
 * instance is elected, the issuing itself (docs/design.md, "Sequence mode").
 *
 * - Election: every instance keeps an ephemeral sequential node under `root`; the one with
 *   the lowest sequence is the issuer. {@link tick} (called periodically) joins, watches and
 *   renews; a node that is gone (session expired) demotes at once and joins again.
 * - Lease: the election itself and every heartbeat are a `setData` on the issuer's own node,
 *   whose send time bounds the session's life ({@link IssuerLease}).
 * - Terms: each election starts a term with new, empty per-key buffers, so its first ID of a
 *   key comes from a range allocated after the election, above every range granted before.
 * - Issue: IDs are taken from the term's buffer in order, and handed out only if, right after
 *   the take and in the same synchronous step, this instance is still the issuer of that
 *   term with its lease in force. Otherwise they are dropped (a gap) and the call refused.
 * - Young sessions: a term issues only once the ZooKeeper session it was elected in is a
 *   session timeout old, so that an issuer elected by a ZooKeeper that lost its data never
 *   overlaps a predecessor that ZooKeeper forgot.
 * - Handing over: an issuer whose allocations keep failing, or that issues more than its share
 *   of the groups, stops issuing and joins again at the end of the line.
 */
export class SequenceGroup {
  private stateValue: SequenceGroupState = 'candidate';
  private termValue = 0;
  private lease: IssuerLease;
  private buffers = new Map<string, SegmentBuffer>();
  /** Our election node's path in the current session, or null (to be created). */
  private node: string | null = null;
  private joins = 0;
  private leader: { name: string; address: string } | null = null;
  private elections = 0;
  private ticking: Promise<void> | null = null;
  private readonly unsubscribe: () => void;
  /** When the current ZooKeeper session was first seen connected (monotonic), or null. */
  private sessionSince: number | null;
  /** The current term issues from this moment on (monotonic). */
  private issuableFrom = Number.POSITIVE_INFINITY;
  /** Since when this term's allocations have failed with its buffer dry (monotonic), or null. */
  private failingSince: number | null = null;
  /** The latest of those failures (monotonic). */
  private failedAt = 0;
  /** Addresses of the group's nodes, as read from their data (for balancing). */
  private addresses = new Map<string, string>();
  /** Other nodes of the group, with when this instance first saw each (monotonic). */
  private seen = new Map<string, number>();
  private candidates = 0;

  constructor(
    private readonly zk: ZkClient,
    private readonly loader: RangeLoader,
    private readonly options: SequenceGroupOptions,
    private readonly clock: Clock,
    private readonly monotonic: () => number,
    private readonly listener: SequenceGroupListener | null = null,
  ) {
    this.lease = new IssuerLease(monotonic, options.leaseMarginMs, () => clock.now());
    // A session already open has an unknown age: counted from now.
    this.sessionSince = zk.connected ? monotonic() : null;
    this.unsubscribe = zk.onStateChange((state) => {
      if (state === 'connected') {
        this.sessionSince ??= this.monotonic();
      } else if (state === 'disconnected') {
        // A session that comes back may come back to a ZooKeeper restored from a snapshot
        // that still held it: its age is counted again from the reconnection.
        this.sessionSince = null;
      } else if (state === 'expired') {
        this.node = null;
        this.sessionSince = null;
        this.seen = new Map();
        this.demote('the ZooKeeper session expired');
      }
    });
  }

  get state(): SequenceGroupState {
    return this.stateValue;
  }

  get term(): number {
    return this.termValue;
  }

  /** True while this instance is the issuer, past its start, and its lease is in force. */
  get issuing(): boolean {
    return (
      this.stateValue === 'issuer' && this.monotonic() >= this.issuableFrom && this.lease.valid()
    );
  }

  /**
   * The address to forward to: the elected issuer as last seen, or null (none known, or this
   * instance). A stopped group keeps looking, so calls that arrive while the instance shuts
   * down reach the successor.
   */
  get issuerAddress(): string | null {
    return this.stateValue === 'candidate' || this.stateValue === 'stopped'
      ? (this.leader?.address ?? null)
      : null;
  }

  /**
   * One round of the election: join if needed, then as issuer renew the lease, as candidate
   * look at who is first. Never throws; at most one round runs at a time.
   */
  tick(): Promise<void> {
    if (this.ticking) return this.ticking;
    const round = this.round().finally(() => {
      this.ticking = null;
    });
    this.ticking = round;
    return round;
  }

  /**
   * `count` consecutive IDs `[start, end)` of `key`, above everything this group issued
   * before for it, in this term or an earlier one, on any instance.
   * @throws {SequenceNoIssuerError} when this instance is not the issuer (or stopped being it).
   * @throws {SequenceLeaseExpiredError} when its lease is not in force.
   * @throws {LeafError} the range allocation's own error (unknown tag, database down, ...).
   */
  async issue(key: string, count: number): Promise<{ start: bigint; end: bigint }> {
    const term = this.termValue;
    this.assertIssuing(key, term);
    let buffer = this.buffers.get(key);
    if (!buffer) {
      buffer = new SegmentBuffer(key, this.loader, this.options.buffer, this.clock);
      this.buffers.set(key, buffer);
    }
    let range: { start: bigint; end: bigint };
    try {
      // The first range of a term takes the row's step; a bare takeRange would take `count`.
      if (!buffer.initialized) await buffer.warm();
      range = await buffer.takeRange(count);
    } catch (error) {
      if (this.termValue !== term || this.stateValue !== 'issuer') {
        throw new SequenceNoIssuerError(key, 'this instance stopped issuing', { cause: error });
      }
      if (cannotAllocate(error)) {
        const now = this.monotonic();
        // A failure long after the previous one starts a new streak.
        const stale = now - this.failedAt >= this.options.resignAfterFailingMs;
        if (this.failingSince === null || stale) this.failingSince = now;
        this.failedAt = now;
      }
      throw error instanceof LeafError
        ? error
        : new SequenceNoIssuerError(key, String(error), { cause: error });
    }
    // The check after the take: see the class comment (docs/design.md, "Sequence mode").
    this.assertIssuing(key, term);
    this.failingSince = null;
    return range;
  }

  /**
   * Graceful stop: refuses every later call at once, then deletes the election node so that
   * a successor starts without waiting for the session to expire. Later rounds only look for
   * the successor ({@link issuerAddress}). Never throws.
   */
  async resign(): Promise<void> {
    if (this.stateValue === 'stopped') return;
    const wasIssuer = this.stateValue === 'issuer';
    this.stateValue = 'resigning';
    this.lease.revoke('resigned');
    this.dropBuffers();
    if (wasIssuer) this.listener?.demoted?.(this.options.group, 'resigned');
    await this.ticking?.catch(() => undefined);
    const node = this.node;
    this.node = null;
    if (node !== null) {
      try {
        await this.zk.delete(node);
      } catch {
        // Gone already, or ZooKeeper unreachable: the session's end removes it.
      }
    }
    this.stateValue = 'stopped';
    this.unsubscribe();
  }

  /** Monitoring view. */
  snapshot(): SequenceGroupSnapshot {
    const issuing = this.stateValue === 'issuer';
    return {
      group: this.options.group,
      state: this.stateValue,
      term: this.termValue,
      issuer: issuing ? this.options.address : (this.leader?.address ?? null),
      leaseRemainingMs: issuing ? Math.max(0, Math.round(this.lease.remainingMs())) : null,
      startsInMs: issuing ? this.startsInMs() : null,
      candidates: this.candidates,
      elections: this.elections,
    };
  }

  private startsInMs(): number | null {
    const wait = this.issuableFrom - this.monotonic();
    return wait > 0 ? Math.ceil(wait) : null;
  }

  private assertIssuing(key: string, term: number): void {
    if (this.stateValue !== 'issuer' || this.termValue !== term) {
      throw new SequenceNoIssuerError(key, 'this instance is not the issuer of its group');
    }
    const wait = this.startsInMs();
    if (wait !== null) {
      throw new SequenceNoIssuerError(
        key,
        `the new issuer starts in ${wait} ms (its ZooKeeper session is younger than the session timeout)`,
      );
    }
    if (!this.lease.valid()) throw new SequenceLeaseExpiredError(key, this.lease.describe());
  }

  private async round(): Promise<void> {
    if (this.stateValue === 'resigning') return;
    if (!this.zk.connected) return; // the lease runs down by itself
    try {
      if (this.stateValue === 'stopped') {
        await this.lookForIssuer();
        return;
      }
      if (this.node === null) {
        if (this.options.eligible?.() === false) {
          await this.lookForIssuer();
          return;
        }
        await this.join();
      }
      const node = this.node!;
      if (this.stateValue === 'issuer') {
        await this.confirm(node, () => undefined);
        const children = await this.look();
        const reason = await this.handOverReason(children);
        if (reason !== null) await this.stepDown(reason);
        return;
      }
      const children = await this.look();
      const mine = nameOf(node);
      if (!children.includes(mine)) {
        this.node = null;
        return;
      }
      if (children[0] === mine) {
        const next = await this.matureNext(children);
        if (next !== null && this.options.balance?.full(next)) {
          // This instance issues its share already: the group goes to the next in line.
          await this.leaveLine(node);
          return;
        }
        // Every earlier node is gone: its session ended (its lease ran out first) or it
        // resigned (it stopped issuing first). The confirming write starts our lease.
        await this.confirm(node, () => this.elect());
        return;
      }
      const first = children[0]!;
      if (first.startsWith(`c-${this.options.run}.`)) {
        // A node of an earlier join of ours whose answer was lost: it would hold the group
        // for this session forever. Remove it; the next round looks again.
        await this.zk.delete(`${this.options.root}/${first}`).catch(() => undefined);
        return;
      }
      await this.learnLeader(first);
    } catch (error) {
      if (
        error instanceof ZkError &&
        (error.zkCode === 'NO_NODE' || error.zkCode === 'SESSION_EXPIRED')
      ) {
        this.node = null;
        this.demote('the election node is gone (session expired)');
      }
      // Other failures (connection loss, timeouts): the lease runs down; the next round retries.
    }
  }

  /** A heartbeat write on our own node; on success the lease reaches from its send time. */
  private async confirm(node: string, then: () => void): Promise<void> {
    const sentAt = this.monotonic();
    const sentAtWall = this.clock.now();
    await this.zk.setData(node, this.nodeData());
    if (this.node !== node || this.stateValue === 'stopped' || this.stateValue === 'resigning')
      return;
    then();
    if (this.stateValue !== 'issuer') return;
    const granted = this.zk.negotiatedSessionTimeoutMs;
    const timeout =
      granted === null
        ? this.options.sessionTimeoutMs
        : Math.min(granted, this.options.sessionTimeoutMs);
    this.lease.confirm(sentAt, timeout, sentAtWall);
  }

  private elect(): void {
    this.dropBuffers();
    this.lease = new IssuerLease(this.monotonic, this.options.leaseMarginMs, () =>
      this.clock.now(),
    );
    this.termValue++;
    this.elections++;
    this.stateValue = 'issuer';
    this.leader = null;
    this.failingSince = null;
    // docs/design.md, "A ZooKeeper that forgot": an issuer ZooKeeper no longer knows of stops
    // within a session timeout of its last heartbeat, which preceded this session.
    this.issuableFrom = (this.sessionSince ?? this.monotonic()) + this.options.freshSessionWaitMs;
    this.listener?.elected?.(this.options.group, this.termValue);
  }

  /** The group's nodes in election order; remembers when each other node was first seen. */
  private async look(): Promise<string[]> {
    const children = sortBySequence(await this.zk.getChildren(this.options.root));
    const now = this.monotonic();
    const seen = new Map<string, number>();
    for (const name of children) seen.set(name, this.seen.get(name) ?? now);
    this.seen = seen;
    for (const name of this.addresses.keys()) if (!seen.has(name)) this.addresses.delete(name);
    this.candidates = children.length;
    return children;
  }

  /**
   * True when the node `name` has existed for a session timeout as this instance saw it: its
   * session is old enough to issue at once if elected (no wait, see {@link elect}).
   */
  private mature(name: string | undefined): name is string {
    if (name === undefined) return false;
    const since = this.seen.get(name);
    return since !== undefined && this.monotonic() - since >= this.options.sessionTimeoutMs;
  }

  /** Why the issuer should hand the group over now, or null. */
  private async handOverReason(children: string[]): Promise<string | null> {
    if (this.stateValue !== 'issuer' || children.length < 2) return null;
    const failing = this.failingSince;
    const now = this.monotonic();
    const limit = this.options.resignAfterFailingMs;
    // Still failing: the streak is old enough, and its latest failure recent.
    if (failing !== null && now - failing >= limit && now - this.failedAt < Math.max(limit, 1)) {
      return `its allocations have failed for ${Math.round(now - failing)} ms`;
    }
    if (!this.options.balance) return null;
    const next = await this.matureNext(children);
    if (next !== null && this.stateValue === 'issuer' && this.options.balance.over(next)) {
      return 'it issues more than its share of the groups';
    }
    return null;
  }

  /**
   * The address of the next in line after the first (`children[1]`) when its node has existed
   * for a session timeout as this instance saw it (its session can issue at once if elected),
   * else null.
   */
  private async matureNext(children: string[]): Promise<string | null> {
    const name = children[1];
    if (!this.mature(name)) return null;
    const known = this.addresses.get(name);
    if (known !== undefined) return known;
    const address = await this.addressOf(name);
    if (address !== null) this.addresses.set(name, address);
    return address;
  }

  /**
   * Stops issuing, then leaves the line (deletes its node): the next in line is elected at
   * its next round; this instance joins again at the end.
   */
  private async stepDown(reason: string): Promise<void> {
    const node = this.node;
    this.demote(`handed over: ${reason}`);
    if (node !== null) await this.leaveLine(node);
  }

  private async leaveLine(node: string): Promise<void> {
    this.node = null;
    // Left behind when this fails: removed by the next round as a node of an earlier join.
    await this.zk.delete(node).catch(() => undefined);
  }

  private async lookForIssuer(): Promise<void> {
    const first = (await this.look())[0];
    if (first === undefined) this.leader = null;
    else await this.learnLeader(first);
  }

  private demote(reason: string): void {
    if (this.stateValue !== 'issuer') return;
    this.stateValue = 'candidate';
    this.lease.revoke(reason);
    this.dropBuffers();
    this.listener?.demoted?.(this.options.group, reason);
  }

  private dropBuffers(): void {
    for (const buffer of this.buffers.values()) buffer.seal();
    this.buffers = new Map();
  }

  /**
   * Creates our election node, or adopts the one an earlier attempt of this join created
   * when its answer was lost (found by the attempt's own prefix).
   */
  private async join(): Promise<void> {
    await this.zk.mkdirp(this.options.root);
    const prefix = `c-${this.options.run}.${++this.joins}-`;
    try {
      this.node = await this.zk.createEphemeralSequential(
        `${this.options.root}/${prefix}`,
        this.nodeData(),
      );
    } catch (error) {
      if (!(error instanceof ZkError && error.zkCode === 'CONNECTION_LOSS')) throw error;
      const found = (await this.zk.getChildren(this.options.root)).find((name) =>
        name.startsWith(prefix),
      );
      if (found === undefined) throw error;
      this.node = `${this.options.root}/${found}`;
    }
  }

  private async learnLeader(name: string): Promise<void> {
    if (this.leader?.name === name) return;
    const address = await this.addressOf(name);
    // Null: gone meanwhile, or unreadable; the next round looks again.
    this.leader = address === null ? null : { name, address };
  }

  /** The address in the data of the node `name`, or null (gone, or unreadable). */
  private async addressOf(name: string): Promise<string | null> {
    try {
      const { data } = await this.zk.getData(`${this.options.root}/${name}`);
      const parsed = JSON.parse(data.toString('utf8')) as Partial<NodeData>;
      return typeof parsed.address === 'string' ? parsed.address : null;
    } catch {
      return null;
    }
  }

  private nodeData(): Buffer {
    const data: NodeData = { address: this.options.address, run: this.options.run };
    return Buffer.from(JSON.stringify(data));
  }
}

/**
 * The buffer ran dry because ranges cannot be allocated (database unreachable, high-water mark
 * unavailable): another instance may do better. A refused range (a regression) is not: a
 * successor without this instance's memory of it would serve it.
 */
function cannotAllocate(error: unknown): boolean {
  if (error instanceof AllocationRegressedError) return false;
  return error instanceof AllocationError || error instanceof SegmentNotReadyError;
}

/** Election node names ordered by their sequence suffix (the prefix holds the run). */
function sortBySequence(names: string[]): string[] {
  return [...names].sort((a, b) =>
    a.slice(-SEQUENCE_DIGITS).localeCompare(b.slice(-SEQUENCE_DIGITS)),
  );
}

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
