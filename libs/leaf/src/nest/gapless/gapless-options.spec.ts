import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { GAPLESS_OPTION_RULES } from '../../core/gapless/gapless-option-rules';
import { GAPLESS_DEFAULTS, resolveGaplessOptions } from './gapless-options';

const dataSource = {} as DataSource;

describe('resolveGaplessOptions', () => {
  it('applies the defaults of the gapless.* rules, one for each field', () => {
    const resolved = resolveGaplessOptions({ dataSource });
    const fields = Object.keys(GAPLESS_OPTION_RULES).map((path) => path.slice('gapless.'.length));
    expect(Object.keys(GAPLESS_DEFAULTS).sort()).toEqual([...fields].sort());
    for (const path of Object.keys(GAPLESS_OPTION_RULES) as Array<
      keyof typeof GAPLESS_OPTION_RULES
    >)
      expect([path, resolved[path.slice(8) as keyof typeof GAPLESS_DEFAULTS]]).toEqual([
        path,
        GAPLESS_OPTION_RULES[path].default,
      ]);
    expect(resolveGaplessOptions({ dataSource, idleInTransactionMs: 5000 })).toMatchObject({
      idleInTransactionMs: 5000,
      lockWaitMs: 2000,
    });
  });

  it('lists every problem at once, by option path', () => {
    let thrown: unknown;
    try {
      resolveGaplessOptions({
        dataSource: undefined as never,
        maxBatch: 6000,
        idleInTransactionMs: -1,
        defaultTtlMs: 10_000,
        maxTtlMs: 5000,
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LeafConfigurationError);
    expect((thrown as LeafConfigurationError).problems).toEqual([
      'gapless.dataSource is required (MySQL/MariaDB or PostgreSQL)',
      'gapless.idleInTransactionMs must be an integer in 0..600000 (got -1)',
      'gapless.maxBatch must be an integer in 1..5000 (got 6000)',
      'gapless.defaultTtlMs must not exceed gapless.maxTtlMs',
    ]);
  });
});
