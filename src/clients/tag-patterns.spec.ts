import { TagPatterns, globMatches } from './tag-patterns';

describe('TagPatterns', () => {
  it.each([
    ['order', 'order', true],
    ['order', 'orders', false],
    ['order-*', 'order-eu', true],
    ['order-*', 'order-', true],
    ['order-*', 'order', false],
    ['*-eu', 'order-eu', true],
    ['*-eu', 'order-us', false],
    ['a*b*c', 'a-b-c', true],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'a-c-b', false],
    ['*', 'anything', true],
    ['**', 'x', true],
    ['o*r*', 'order', true],
  ])('"%s" against "%s": %s', (pattern, tag, expected) => {
    expect(globMatches(pattern, tag)).toBe(expected);
    expect(new TagPatterns([pattern]).matches(tag)).toBe(expected);
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
