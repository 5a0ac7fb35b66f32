/** A tag pattern: 1-128 characters of a key's alphabet (`[A-Za-z0-9_.:-]`) or `*`. */
export const TAG_PATTERN_SYNTAX = /^[A-Za-z0-9_.:*-]{1,128}$/;

/**
 * The tags a client token may use: exact names (a `Set` lookup) and glob-like patterns where
 * `*` stands for any run of characters, empty included (`order-*`, `*-eu`, `*`). Matching is
 * linear in the tag and the pattern (the classic wildcard walk that backtracks only to the
 * last `*`), never a regular expression that a crafted pattern could make slow.
 */
export class TagPatterns {
  private readonly exact: ReadonlySet<string>;
  private readonly wildcards: readonly string[];
  /** `*` alone: every tag. */
  readonly any: boolean;

  /** @param patterns valid patterns (see {@link TAG_PATTERN_SYNTAX}; checked by the caller). */
  constructor(readonly patterns: readonly string[]) {
    this.exact = new Set(patterns.filter((p) => !p.includes('*')));
    this.any = patterns.includes('*');
    this.wildcards = this.any ? [] : patterns.filter((p) => p.includes('*'));
  }

  /** True when `tag` is one of the names or matches one of the patterns. */
  matches(tag: string): boolean {
    if (this.any || this.exact.has(tag)) return true;
    for (const pattern of this.wildcards) if (globMatches(pattern, tag)) return true;
    return false;
  }
}

/** `*` matches any run of characters (empty included); every other character itself. */
export function globMatches(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      resume = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}
