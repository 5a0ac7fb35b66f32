import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIGURATION_REFERENCE_PATH, renderConfigurationReference } from './config-reference';
import { APP_ENV } from './app-env';

describe('docs/configuration.md', () => {
  const file = readFileSync(join(__dirname, '..', '..', CONFIGURATION_REFERENCE_PATH), 'utf8');

  it('is what the rules render (run `npm run docs:config` after changing a variable, a default or a range)', () => {
    expect(file).toBe(renderConfigurationReference());
  });

  it('has a row for every environment variable the application reads', () => {
    for (const variable of APP_ENV)
      expect(file).toMatch(new RegExp(`^\\| \`${variable.name}\`[ |]`, 'm'));
  });
});
