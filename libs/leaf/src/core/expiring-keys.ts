/**
 * A negative cache: keys remembered until a deadline, at most `capacity` of them. When full,
 * the least recently used key is forgotten first, so a flood of distinct keys a caller made
 * up cannot grow it, nor push out for long the few keys asked for again and again.
 */
export class ExpiringKeys {
  /** Key → deadline, in recency order (a Map iterates in insertion order). */
  private readonly until = new Map<string, number>();

  constructor(
    /** Keys remembered at most. */
    readonly capacity: number,
  ) {}

  /** Keys remembered now (expired ones included until they are looked up or pushed out). */
  get size(): number {
    return this.until.size;
  }

  /** True while `key` is remembered at `now` (it becomes the most recent); an expired key is forgotten. */
  has(key: string, now: number): boolean {
    const until = this.until.get(key);
    if (until === undefined) return false;
    this.until.delete(key);
    if (now >= until) return false;
    this.until.set(key, until);
    return true;
  }

  /** Remembers `key` until `deadline`, forgetting the least recently used key when full. */
  add(key: string, deadline: number): void {
    this.until.delete(key);
    if (this.until.size >= this.capacity) {
      const oldest = this.until.keys().next();
      if (!oldest.done) this.until.delete(oldest.value);
    }
    this.until.set(key, deadline);
  }

  /** Forgets `key`. */
  delete(key: string): void {
    this.until.delete(key);
  }
}
