/** The `tag` label of every tag past the cap of {@link TagLabels}. */
export const OTHER_TAG_LABEL = '_other';

/**
 * The `tag` label values of Leaf's per-tag series, bounded: the first `cap` tags seen get a
 * label of their own for the life of the process, every later one shares
 * {@link OTHER_TAG_LABEL}. A tag is only given a label once it is known to exist (a row of
 * `leaf_alloc`, or a range loaded for it): a key a caller made up never creates a series.
 */
export class TagLabels {
  private readonly own = new Set<string>();

  constructor(
    /** Tags with a label of their own, at most. */
    readonly cap: number,
  ) {}

  /** The label of `tag`, which is known to exist: its own while the cap allows. */
  of(tag: string): string {
    if (this.own.has(tag)) return tag;
    if (this.own.size >= this.cap) return OTHER_TAG_LABEL;
    this.own.add(tag);
    return tag;
  }

  /**
   * `pick` of each of `items` (tags known to exist) under its label: those past the cap
   * summed, or `combine`d, in {@link OTHER_TAG_LABEL}'s.
   */
  totals<T extends { readonly tag: string }>(
    items: readonly T[],
    pick: (item: T) => number,
    combine: (a: number, b: number) => number = (a, b) => a + b,
  ): Map<string, number> {
    const values = new Map<string, number>();
    for (const item of items) {
      const label = this.of(item.tag);
      const previous = values.get(label);
      values.set(label, previous === undefined ? pick(item) : combine(previous, pick(item)));
    }
    return values;
  }

  /** The label of `tag`, not known to exist: its own only if it already has one. */
  ifLabelled(tag: string): string {
    return this.own.has(tag) ? tag : OTHER_TAG_LABEL;
  }
}
