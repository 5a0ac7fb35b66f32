import type { OptionRule } from '../option-rule';

const DAY_MS = 86_400_000;
const TEN_MINUTES_MS = 600_000;
/**
 * Most rows one statement of a batch writes: a record takes 10 bound values, and
 * PostgreSQL's and MySQL's prepared statements hold 65,535 at most.
 */
const MAX_ROWS_PER_STATEMENT = 5000;

/**
 * Gapless series' options (`LeafModule`'s `gapless`, docs/gapless.md) with their defaults and
 * ranges: part of `LEAF_OPTION_RULES` (core/leaf-option-rules.ts).
 */
export const GAPLESS_OPTION_RULES = {
  'gapless.defaultTtlMs': {
    type: 'integer',
    default: 300_000,
    min: 1,
    max: 30 * DAY_MS,
    rangeNote: 'at most `gapless.maxTtlMs`',
    doc: 'TTL of a reservation given none.',
  },
  'gapless.maxTtlMs': {
    type: 'integer',
    default: DAY_MS,
    min: 1,
    max: 30 * DAY_MS,
    doc: 'Longest TTL `reserve` accepts.',
  },
  'gapless.lockWaitMs': {
    type: 'integer',
    default: 2000,
    min: 1,
    max: TEN_MINUTES_MS,
    doc: 'Longest wait for a series’ lock, then `LEAF_GAPLESS_BUSY`.',
  },
  'gapless.idleInTransactionMs': {
    type: 'integer',
    default: 0,
    min: 0,
    max: TEN_MINUTES_MS,
    rangeNote: '0: off',
    doc: 'PostgreSQL: a lock holder idle this long is ended (docs/gapless.md).',
  },
  'gapless.maxBatch': {
    type: 'integer',
    default: 500,
    min: 1,
    max: MAX_ROWS_PER_STATEMENT,
    doc: 'Most requests of one series in one transaction.',
  },
  'gapless.sweepIntervalMs': {
    type: 'integer',
    default: 5000,
    min: 10,
    max: TEN_MINUTES_MS,
    doc: 'Period of the expiry sweep.',
  },
  'gapless.sweepLimit': {
    type: 'integer',
    default: 1000,
    min: 1,
    max: MAX_ROWS_PER_STATEMENT,
    doc: 'Most voids per series per sweep.',
  },
} as const satisfies Record<string, OptionRule>;
