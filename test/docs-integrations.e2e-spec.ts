/**
 * Each ORM integration's page in docs/integrations/ shows the same complete example as the
 * package README's section, which the fresh applications of test/consumer-apps/ are built
 * from: the files (blocks whose first line is their path), the install commands and the SQL
 * of the two are equal, so that the page's copy cannot drift from what is tested.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { integrationOf, readmeIntegration } from './support/readme-setup';

const PAGES: Record<string, string> = {
  'typeorm.md': 'IDs on your TypeORM entities',
};

describe('docs/integrations/: the ORM pages repeat the package README exactly', () => {
  it.each(Object.entries(PAGES))('%s has the files, commands and SQL of "%s"', (page, heading) => {
    const readme = readmeIntegration(heading);
    const text = readFileSync(join(__dirname, '..', 'docs', 'integrations', page), 'utf8');
    const onPage = integrationOf(text);
    expect(Object.keys(readme.files).length).toBeGreaterThan(0);
    expect(onPage.files).toEqual(readme.files);
    expect(onPage.install).toEqual(readme.install);
    expect(onPage.sql).toEqual(readme.sql);
  });
});
