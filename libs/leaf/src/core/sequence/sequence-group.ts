import type { Clock } from '../clock';
import { LeafError } from '../errors/leaf.error';
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
  /** The per-key buffers of a term (segment mode's settings). */
  readonly buffer: SegmentBufferOptions;
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

  constructor(
    private readonly zk: ZkClient,
    private readonly loader: RangeLoader,
    private readonly options: SequenceGroupOptions,
    private readonly clock: Clock,
    private readonly monotonic: () => number,
    private readonly listener: SequenceGroupListener | null = null,
  ) {
    this.lease = new IssuerLease(monotonic, options.leaseMarginMs, () => clock.now());
    this.unsubscribe = zk.onStateChange((state) => {
      if (state === 'expired') {
        this.node = null;
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

  /** True while this instance is the issuer and its lease is in force. */
  get issuing(): boolean {
    return this.stateValue === 'issuer' && this.lease.valid();
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
      throw error instanceof LeafError
        ? error
        : new SequenceNoIssuerError(key, String(error), { cause: error });
    }
    // The check after the take: see the class comment (docs/design.md, "Sequence mode").
    this.assertIssuing(key, term);
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
      elections: this.elections,
    };
  }

  private assertIssuing(key: string, term: number): void {
    if (this.stateValue !== 'issuer' || this.termValue !== term) {
      throw new SequenceNoIssuerError(key, 'this instance is not the issuer of its group');
    }
    if (!this.lease.valid()) throw new SequenceLeaseExpiredError(key, this.lease.describe());
  }

  private async round(): Promise<void> {
    if (this.stateValue === 'resigning') return;
    if (!this.zk.connected) return; // the lease runs down by itself
    try {
      if (this.stateValue === 'stopped') {
        const first = sortBySequence(await this.zk.getChildren(this.options.root))[0];
        if (first === undefined) this.leader = null;
        else await this.learnLeader(first);
        return;
      }
      if (this.node === null) await this.join();
      const node = this.node!;
      if (this.stateValue === 'issuer') {
        await this.confirm(node, () => undefined);
        return;
      }
      const children = sortBySequence(await this.zk.getChildren(this.options.root));
      const mine = nameOf(node);
      if (!children.includes(mine)) {
        this.node = null;
        return;
      }
      if (children[0] === mine) {
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
    this.listener?.elected?.(this.options.group, this.termValue);
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
    try {
      const { data } = await this.zk.getData(`${this.options.root}/${name}`);
      const parsed = JSON.parse(data.toString('utf8')) as Partial<NodeData>;
      this.leader = typeof parsed.address === 'string' ? { name, address: parsed.address } : null;
    } catch {
      this.leader = null; // gone meanwhile, or unreadable: the next round looks again
    }
  }

  private nodeData(): Buffer {
    const data: NodeData = { address: this.options.address, run: this.options.run };
    return Buffer.from(JSON.stringify(data));
  }
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
