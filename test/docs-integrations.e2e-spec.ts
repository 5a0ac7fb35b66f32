/**
 * Each ORM guide lives once: its page in docs/integrations/ sets up the complete application
 * (`## Set it up`: install commands, files, SQL), which the fresh applications of
 * test/consumer-apps/ are built from, and the package README repeats none of it — its only
 * files are _Setup_'s, and it links every page.
 */
import { readFileSync } from 'node:fs';
import {
  fencedBlocks,
  integrationOf,
  LIBRARY_README,
  pageIntegration,
  readmeSections,
} from './support/readme-setup';

const PAGES = ['typeorm', 'prisma', 'drizzle', 'mikro-orm'];

describe('docs/integrations/: one guide per ORM', () => {
  const readme = readFileSync(LIBRARY_README, 'utf8');

  it.each(PAGES)('%s.md sets up a complete application: packages, files and SQL', (page) => {
    const setUp = pageIntegration(page);
    expect(Object.keys(setUp.files).length).toBeGreaterThan(0);
    expect(setUp.sql.join('\n')).toMatch(/INSERT INTO leaf_alloc/);
    expect(readme).toContain(`(../../docs/integrations/${page}.md)`);
  });

  it("the package README's only files are Setup's", () => {
    const outside = readmeSections(readme, (heading) => heading !== 'Setup');
    expect(Object.keys(integrationOf(outside).files)).toEqual([]);
    const setup = readmeSections(readme, (heading) => heading === 'Setup');
    expect(fencedBlocks(setup).length).toBeGreaterThan(0);
  });
});
