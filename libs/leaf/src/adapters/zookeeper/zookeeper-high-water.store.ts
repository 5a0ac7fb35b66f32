import { HighWaterUnavailableError } from '../../core/errors/allocation.error';
import { LEAF_DEFAULTS } from '../../core/leaf-defaults';
import type { HighWaterMark, HighWaterStore } from '../../core/segment/high-water';
import { withTimeout } from '../../core/with-timeout';
import { isZkError, ZkError, type ZkClient } from '../../core/zookeeper/zk-client.port';

/** The parent znode of every mark of deployment `name`: `/segment/{name}/high-water`. */
export function highWaterRoot(name: string): string {
  return `/segment/${name}/high-water`;
}

/**
 * {@link HighWaterStore} on ZooKeeper: one persistent znode per tag,
 * `/segment/{name}/high-water/{tag}`, whose data is the mark as a decimal string (empty: no
 * mark yet). The compare-and-set is ZooKeeper's versioned `setData`; an absent node is
 * created empty first (`mkdirp`), so creating and raising are the same versioned write.
 *
 * Any failure but a lost compare-and-set is {@link HighWaterUnavailableError}: a call while
 * the session is disconnected fails at once, and every call is bounded by
 * `callTimeoutMs` (`segment.highWater.callTimeoutMs`; a write that timed out may still be applied, which is
 * safe: a mark above `max_id` only makes the next range start higher).
 */
export class ZookeeperHighWaterStore implements HighWaterStore {
  private readonly root: string;
  private readonly created = new Set<string>();
  private readonly callTimeoutMs: number;

  /**
   * @param options.callTimeoutMs most time one ZooKeeper call may take (it runs while the
   *   tag's row is locked); validated by the module's options, default 2000.
   */
  constructor(
    private readonly zk: ZkClient,
    name: string,
    options: { callTimeoutMs?: number } = {},
  ) {
    this.root = highWaterRoot(name);
    this.callTimeoutMs = options.callTimeoutMs ?? LEAF_DEFAULTS.segment.highWater.callTimeoutMs;
  }

  readonly kind = 'zookeeper';

  /** The parent znode of the marks. */
  describe(): string {
    return this.root;
  }

  /** False while the session is not connected. */
  get available(): boolean {
    return this.zk.connected;
  }

  /** Connects the store's own client. @throws {ZkError} when not connected within `timeoutMs` */
  open(timeoutMs: number): Promise<void> {
    return this.zk.connect(timeoutMs);
  }

  /** Closes the store's own client. */
  close(): Promise<void> {
    return this.zk.close();
  }

  /** The znode of `tag` (tags are `[A-Za-z0-9_.:-]`; only `.` and `..` need escaping). */
  pathOf(tag: string): string {
    return `${this.root}/${tag === '.' || tag === '..' ? tag.replaceAll('.', '%2E') : tag}`;
  }

  async read(tag: string): Promise<HighWaterMark | null> {
    const node = await this.readNode(tag);
    return node.value === null ? null : { value: node.value, version: node.version };
  }

  async write(tag: string, value: bigint, expected: HighWaterMark | null): Promise<boolean> {
    let version: number;
    if (expected) {
      version = expected.version;
    } else {
      // No mark yet: create the node empty (if missing), then set it only if still empty.
      const node = await this.readNode(tag, true);
      if (node.value !== null) return false;
      version = node.version;
    }
    try {
      await this.call(tag, () =>
        this.zk.setData(this.pathOf(tag), Buffer.from(value.toString()), version),
      );
      return true;
    } catch (error) {
      if (isZkError(error, 'BAD_VERSION') || isZkError(error, 'NO_NODE')) return false;
      throw this.unavailable(tag, error);
    }
  }

  private async readNode(
    tag: string,
    create = false,
  ): Promise<{ value: bigint | null; version: number }> {
    const path = this.pathOf(tag);
    try {
      if (create && !this.created.has(tag)) {
        await this.call(tag, () => this.zk.mkdirp(path));
        this.created.add(tag);
      }
      const { data, version } = await this.call(tag, () => this.zk.getData(path));
      const text = data.toString('utf8');
      if (text === '') return { value: null, version };
      if (!/^\d{1,19}$/.test(text)) {
        throw new HighWaterUnavailableError(
          tag,
          `${path} holds "${text.slice(0, 40)}", not a decimal`,
        );
      }
      return { value: BigInt(text), version };
    } catch (error) {
      if (isZkError(error, 'NO_NODE')) {
        this.created.delete(tag);
        return { value: null, version: -1 };
      }
      throw this.unavailable(tag, error);
    }
  }

  private async call<T>(tag: string, operation: () => Promise<T>): Promise<T> {
    if (!this.zk.connected) throw new HighWaterUnavailableError(tag, 'ZooKeeper is disconnected');
    const outcome = await withTimeout(operation(), this.callTimeoutMs);
    if (!outcome.ok) {
      throw new HighWaterUnavailableError(
        tag,
        `ZooKeeper did not answer within ${this.callTimeoutMs} ms`,
      );
    }
    return outcome.value;
  }

  private unavailable(tag: string, error: unknown): Error {
    if (error instanceof HighWaterUnavailableError) return error;
    const reason =
      error instanceof ZkError ? `ZooKeeper ${error.zkCode}: ${error.message}` : String(error);
    return new HighWaterUnavailableError(tag, reason, { cause: error });
  }
}
