import type { IdService, LeafMode } from '../id.service';

interface Waiter {
  resolve(id: bigint): void;
  reject(error: unknown): void;
}

interface Group {
  readonly mode: LeafMode;
  readonly key: string;
  readonly waiters: Waiter[];
}

/**
 * Gathers the IDs asked for in one turn of the event loop into one `getIds` call per mode and
 * key (chunks of at most `maxBatchSize`), for the ORM integrations: TypeORM broadcasts
 * `beforeInsert` for every row of a `save([...])` or `insert([...])` in one synchronous loop,
 * and the Prisma extension asks for every row of an operation at once, so a bulk insert of
 * 1,000 rows takes one batch call instead of 1,000. A single ID takes `get`, which waits for a
 * range being loaded where `getIds` would not.
 */
export class IdBatcher {
  private pending = new Map<string, Group>();

  constructor(
    private readonly ids: IdService,
    private readonly maxBatchSize: number,
  ) {}

  /** One ID of `mode` for `key`, taken with the others asked for in the same turn. */
  next(mode: LeafMode, key: string): Promise<bigint> {
    return new Promise<bigint>((resolve, reject) => {
      if (this.pending.size === 0) queueMicrotask(() => this.flush());
      const name = `${mode}\u0000${key}`;
      const group = this.pending.get(name) ?? { mode, key, waiters: [] };
      this.pending.set(name, group);
      group.waiters.push({ resolve, reject });
    });
  }

  private flush(): void {
    const groups = [...this.pending.values()];
    this.pending = new Map();
    for (const group of groups) {
      for (let start = 0; start < group.waiters.length; start += this.maxBatchSize) {
        const chunk = group.waiters.slice(start, start + this.maxBatchSize);
        void this.serve(group.mode, group.key, chunk);
      }
    }
  }

  private async serve(mode: LeafMode, key: string, waiters: Waiter[]): Promise<void> {
    try {
      const ids =
        waiters.length === 1
          ? [await this.ids.get(mode, key)]
          : await this.ids.getIds(mode, key, waiters.length);
      waiters.forEach((waiter, i) => waiter.resolve(ids[i]));
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    }
  }
}
