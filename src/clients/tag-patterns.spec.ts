import { TagPatterns, globMatches } from './tag-patterns';

describe('TagPatterns', () => {
  it.each([
    ['order', ['order'], ['orders']],
    ['order-*', ['order-eu', 'order-'], ['order']],
    ['*-eu', ['order-eu'], ['order-us']],
    ['a*b*c', ['a-b-c', 'abc'], ['a-c-b']],
    ['*', ['anything'], []],
    ['**', ['x'], []],
    ['o*r*', ['order'], []],
  ])('"%s" matches %j, not %j', (pattern, matching, others) => {
    for (const [tags, expected] of [
      [matching, true],
      [others, false],
    ] as const) {
      for (const tag of tags) {
        expect({ tag, matches: globMatches(pattern, tag) }).toEqual({ tag, matches: expected });
        expect({ tag, matches: new TagPatterns([pattern]).matches(tag) }).toEqual({
          tag,
          matches: expected,
        });
      }
    }
  });

  it('names and patterns together; "*" alone matches every tag', () => {
    const tags = new TagPatterns(['user', 'order-*']);
    expect(tags.matches('user')).toBe(true);
    expect(tags.matches('order-1')).toBe(true);
    expect(tags.matches('users')).toBe(false);
    expect(tags.any).toBe(false);
    expect(new TagPatterns(['x', '*']).any).toBe(true);
  });

  it('a pattern with many stars against a long tag stays linear (no backtracking blow-up)', () => {
    const pattern = `${'*a'.repeat(60)}*b`;
    const tag = 'a'.repeat(128);
    const started = performance.now();
    expect(globMatches(pattern, tag)).toBe(false);
    expect(performance.now() - started).toBeLessThan(50);
  });
});
