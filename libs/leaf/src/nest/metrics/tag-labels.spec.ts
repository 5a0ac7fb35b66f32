import { OTHER_TAG_LABEL, TagLabels } from './tag-labels';

describe('TagLabels', () => {
  it('gives the first tags labels of their own and the rest one "_other" label', () => {
    const labels = new TagLabels(2);
    expect([labels.of('a'), labels.of('b'), labels.of('c'), labels.of('a')]).toEqual([
      'a',
      'b',
      OTHER_TAG_LABEL,
      'a',
    ]);
    const totals = labels.totals(
      ['a', 'b', 'c', 'd'].map((tag, i) => ({ tag, n: i + 1 })),
      (item) => item.n,
    );
    expect([...totals]).toEqual([
      ['a', 1],
      ['b', 2],
      [OTHER_TAG_LABEL, 7],
    ]);
  });

  it('never labels a tag not known to exist', () => {
    const labels = new TagLabels(100);
    for (let i = 0; i < 1000; i++) expect(labels.ifLabelled(`unknown-${i}`)).toBe(OTHER_TAG_LABEL);
    labels.of('known');
    expect(labels.ifLabelled('known')).toBe('known');
  });
});
