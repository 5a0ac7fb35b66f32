import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkedOption, LEAF_DEFAULTS } from '../core/leaf-defaults';
import { LEAF_OPTION_RULES } from '../core/leaf-option-rules';
import type { OptionRule } from '../core/option-rule';

/** The interfaces of leaf-options.interface.ts (and leaf-high-water-options.ts) and the option path prefix of their fields. */
const INTERFACES: Record<string, string> = {
  LeafModuleOptions: '',
  LeafSegmentOptions: 'segment.',
  LeafHighWaterZookeeperOptions: 'segment.highWater.',
  LeafHighWaterDatabaseOptions: 'segment.highWater.',
  LeafZookeeperOptions: 'snowflake.zookeeper.',
  LeafSnowflakeOptions: 'snowflake.',
  LeafSequenceZookeeperOptions: 'sequence.zookeeper.',
  LeafSequenceOptions: 'sequence.',
  LeafSnowflakeDatabaseOptions: 'snowflake.database.',
  LeafSnowflakeRegionOptions: 'snowflake.region.',
  LeafSequenceDatabaseOptions: 'sequence.database.',
  LeafOpaqueOptions: 'opaque.',
  LeafGaplessOptions: 'gapless.',
};

/** `path → text of its @default tag` for every documented field of the option interfaces. */
function defaultTags(): Map<string, string> {
  const source = [
    'leaf-options.interface.ts',
    'leaf-high-water-options.ts',
    'leaf-snowflake-database.options.ts',
    'sequence-options.interface.ts',
    'gapless/gapless-options.ts',
  ]
    .map((file) => readFileSync(join(__dirname, file), 'utf8'))
    .join('\n');
  const tags = new Map<string, string>();
  const blocks = source.split(/^export interface /m).slice(1);
  for (const block of blocks) {
    const name = /^(\w+)/.exec(block)![1]!;
    const prefix = INTERFACES[name];
    if (prefix === undefined) continue;
    for (const match of block.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*\n\s*(\w+)\??:/g)) {
      const tag = /@default\s+([^\n*]+)/.exec(match[1]!);
      if (tag) tags.set(`${prefix}${match[2]}`, tag[1]!.trim());
    }
  }
  return tags;
}

/** How a constant default appears first in its @default tag. */
function literal(rule: OptionRule): string | null {
  if (rule.default === null) return null;
  if (Array.isArray(rule.default)) return '[]';
  if (typeof rule.default === 'string') return `'${rule.default}'`;
  return String(rule.default);
}

describe('LEAF_OPTION_RULES', () => {
  const tags = defaultTags();

  it('every @default tag of LeafModuleOptions states the rule’s default', () => {
    let checked = 0;
    for (const [path, rule] of Object.entries(LEAF_OPTION_RULES) as [string, OptionRule][]) {
      const expected = literal(rule);
      const tag = tags.get(path);
      if (expected === null) continue;
      if (path === 'snowflake.ordinal.offset') continue; // an inline type, documented there
      expect([path, tag?.split(/\s/)[0]]).toEqual([path, expected]);
      checked += 1;
    }
    expect(checked).toBeGreaterThanOrEqual(24);
  });

  it('every @default tag belongs to an option with a rule (or is an `enabled` switch)', () => {
    for (const path of tags.keys()) {
      if (
        /(^|\.)enabled$/.test(path) ||
        path === 'clock' ||
        path === 'segment' ||
        path === 'snowflake' ||
        path === 'sequence' ||
        // Objects, not values: segment mode's DataSource, or the source's own switch.
        path === 'snowflake.database.dataSource' ||
        path === 'snowflake.database'
      )
        continue;
      expect([path, path in LEAF_OPTION_RULES]).toEqual([path, true]);
    }
  });

  it('LEAF_DEFAULTS reads the rules', () => {
    expect(LEAF_DEFAULTS.maxBatchSize).toBe(LEAF_OPTION_RULES.maxBatchSize.default);
    expect(LEAF_DEFAULTS.snowflake.zookeeper.reclaim).toBe('when-exhausted');
    expect(LEAF_DEFAULTS.segment.maxConcurrentLoads).toBe(8);
  });

  it('checkedOption: the default when unset, a problem naming the label when out of range', () => {
    const problems: string[] = [];
    expect(checkedOption(problems, 'maxBatchSize', undefined)).toBe(1000);
    expect(checkedOption(problems, 'maxBatchSize', 0, { label: 'LEAF_MAX_BATCH' })).toBe(1000);
    expect(checkedOption(problems, 'segment.preloadThreshold', 1.5)).toBe(0.9);
    expect(checkedOption(problems, 'name', 'a/b')).toBe('leaf');
    expect(checkedOption(problems, 'snowflake.ordinal.offset', 70, { max: 63 })).toBe(0);
    expect(problems).toEqual([
      'LEAF_MAX_BATCH must be an integer in 1..1000000 (got 0)',
      'segment.preloadThreshold must be a number in (0, 1] (got 1.5)',
      'name must be 1-64 characters of `A-Z a-z 0-9 . _ -` (no `/`) (got "a/b")',
      'snowflake.ordinal.offset must be an integer in 0..63 (got 70)',
    ]);
  });
});
