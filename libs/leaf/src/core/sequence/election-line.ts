import { ZkError, type ZkClient } from '../zookeeper/zk-client.port';
import type { SequenceGroupOptions } from './sequence-group.options';

/** What an election node carries. */
interface NodeData {
  readonly address: string;
  readonly run: string;
}

const SEQUENCE_DIGITS = 10;

/**
 * Where an {@link ElectionLine} stands and what its node says; another node's session counts
 * as mature once seen for `sessionTimeoutMs`.
 */
type ElectionLineOptions = Pick<
  SequenceGroupOptions,
  'root' | 'address' | 'run' | 'sessionTimeoutMs'
>;

/**
 * This instance's place in one group's election line (docs/design.md, "Sequence mode"): its
 * ephemeral sequential node under `root`, the other nodes in election order with when each
 * was first seen and its address, and the issuer as last learned. The election's decisions
 * are {@link SequenceGroup}'s; this is the bookkeeping of the line.
 */
export class ElectionLine {
  /** Our election node's path in the current session, or null (to be created). */
  node: string | null = null;
  private joins = 0;
  /** The issuer as last learned (null: none known, or this instance). */
  leader: { readonly name: string; readonly address: string } | null = null;
  /** Election nodes in the group at the last look (about the instances taking part). */
  candidates = 0;
  /** Addresses of the group's nodes, as read from their data (for balancing). */
  private addresses = new Map<string, string>();
  /** Other nodes of the group, with when this instance first saw each (monotonic). */
  private seen = new Map<string, number>();

  constructor(
    private readonly zk: ZkClient,
    private readonly options: ElectionLineOptions,
    private readonly monotonic: () => number,
  ) {}

  /** The session expired: our node is gone and every node is seen anew. */
  sessionExpired(): void {
    this.node = null;
    this.seen = new Map();
  }

  /** The name of our node, or null. */
  get name(): string | null {
    return this.node === null ? null : this.node.slice(this.node.lastIndexOf('/') + 1);
  }

  /** True when `name` is a node of an earlier join of this process. */
  isOurs(name: string): boolean {
    return name.startsWith(`c-${this.options.run}.`);
  }

  /** Deletes the node `name` of the group (one of ours an earlier join left); never throws. */
  async remove(name: string): Promise<void> {
    await this.zk.delete(`${this.options.root}/${name}`).catch(() => undefined);
  }

  /**
   * Creates our election node, or adopts the one an earlier attempt of this join created
   * when its answer was lost (found by the attempt's own prefix).
   */
  async join(): Promise<void> {
    await this.zk.mkdirp(this.options.root);
    const prefix = `c-${this.options.run}.${++this.joins}-`;
    try {
      this.node = await this.zk.createEphemeralSequential(
        `${this.options.root}/${prefix}`,
        this.data(),
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

  /** The group's nodes in election order; remembers when each other node was first seen. */
  async look(): Promise<string[]> {
    // Ordered by their sequence suffix (the prefix holds the run).
    const children = (await this.zk.getChildren(this.options.root))
      .slice()
      .sort((a, b) => a.slice(-SEQUENCE_DIGITS).localeCompare(b.slice(-SEQUENCE_DIGITS)));
    const now = this.monotonic();
    const seen = new Map<string, number>();
    for (const name of children) seen.set(name, this.seen.get(name) ?? now);
    this.seen = seen;
    for (const name of this.addresses.keys()) if (!seen.has(name)) this.addresses.delete(name);
    this.candidates = children.length;
    return children;
  }

  /**
   * The address of the next in line after the first (`children[1]`) when its node has existed
   * for a session timeout as this instance saw it (its session can issue at once if elected,
   * with no wait; see `SequenceGroup.elect`), else null.
   */
  async matureNext(children: string[]): Promise<string | null> {
    const name = children[1];
    const since = name === undefined ? undefined : this.seen.get(name);
    if (name === undefined || since === undefined) return null;
    if (this.monotonic() - since < this.options.sessionTimeoutMs) return null;
    const known = this.addresses.get(name);
    if (known !== undefined) return known;
    const address = await this.addressOf(name);
    if (address !== null) this.addresses.set(name, address);
    return address;
  }

  /** Deletes our node: the next in line is elected at its next round. */
  async leave(node: string): Promise<void> {
    this.node = null;
    // Left behind when this fails: removed by the next round as a node of an earlier join.
    await this.zk.delete(node).catch(() => undefined);
  }

  /** Learns the issuer without standing for election (not eligible, or stopped). */
  async lookForIssuer(): Promise<void> {
    const first = (await this.look())[0];
    if (first === undefined) this.leader = null;
    else await this.learnLeader(first);
  }

  /** Learns the address of the issuer, the node `name`. */
  async learnLeader(name: string): Promise<void> {
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

  /** What our node carries. */
  data(): Buffer {
    const data: NodeData = { address: this.options.address, run: this.options.run };
    return Buffer.from(JSON.stringify(data));
  }
}
