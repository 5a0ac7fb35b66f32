/**
 * What an option's rule is (its type, default, range and doc) and how a value is checked
 * against it. The rules themselves are in ./leaf-option-rules.ts (`LEAF_OPTION_RULES`).
 */

/** Problems found while resolving options; thrown together as one `LeafConfigurationError`. */
export type Problems = string[];

/** An integer option: `default` when left out (`null`: no default, see `defaultNote`). */
export interface IntegerRule {
  readonly type: 'integer';
  readonly default: number | null;
  readonly min: number;
  readonly max: number;
  /** How the default is derived when it is not a constant. */
  readonly defaultNote?: string;
  /** What else bounds the value beyond `min..max`. */
  readonly rangeNote?: string;
  readonly doc: string;
}

/** A number option in `(exclusiveMin, max]`. */
export interface FractionRule {
  readonly type: 'fraction';
  readonly default: number;
  readonly exclusiveMin: number;
  readonly max: number;
  readonly doc: string;
}

export interface BooleanRule {
  readonly type: 'boolean';
  /** `null`: derived, see `defaultNote`. */
  readonly default: boolean | null;
  readonly defaultNote?: string;
  readonly doc: string;
}

/** One of a few strings. */
export interface EnumRule<T extends string = string> {
  readonly type: 'enum';
  readonly values: readonly [T, ...T[]];
  readonly default: T;
  /** When the default depends on other options. */
  readonly defaultNote?: string;
  readonly rangeNote?: string;
  readonly doc: string;
}

/** A string; `pattern` (described by `rangeNote`) when it has a syntax. */
export interface StringRule {
  readonly type: 'string';
  readonly default: string | null;
  readonly pattern?: RegExp;
  readonly rangeNote?: string;
  readonly defaultNote?: string;
  readonly doc: string;
}

/** A list of non-empty strings. */
export interface ListRule {
  readonly type: 'list';
  readonly default: readonly string[];
  /** Shortest item (characters). @default 1 */
  readonly minItemLength?: number;
  /** Most items. */
  readonly maxItems?: number;
  /** What `minItemLength` and `maxItems` say, in words (the problem and the docs use it). */
  readonly rangeNote?: string;
  readonly defaultNote?: string;
  readonly doc: string;
}

export type OptionRule =
  IntegerRule | FractionRule | BooleanRule | EnumRule | StringRule | ListRule;

/** `checkedOption` (./leaf-defaults.ts) for any rule (the remote client's table too). */
export function checkedRule<T>(
  problems: Problems,
  label: string,
  rule: OptionRule,
  value: unknown,
  options: { fallback?: T; max?: number } = {},
): T {
  const fallback = (options.fallback ?? rule.default) as T;
  if (value === undefined) return fallback;
  const problem = ruleProblem(rule, value, options.max);
  if (problem === null) return value as T;
  problems.push(`${label} must be ${problem} (got ${JSON.stringify(value) ?? String(value)})`);
  return fallback;
}

/** What `value` breaks of `rule`, as "an integer in 1..10", or `null` when it is valid. */
export function ruleProblem(rule: OptionRule, value: unknown, maxOverride?: number): string | null {
  switch (rule.type) {
    case 'integer': {
      const max = maxOverride ?? rule.max;
      const ok =
        typeof value === 'number' && Number.isInteger(value) && value >= rule.min && value <= max;
      return ok ? null : `an integer in ${rule.min}..${max}`;
    }
    case 'fraction': {
      const ok = typeof value === 'number' && value > rule.exclusiveMin && value <= rule.max;
      return ok ? null : `a number in (${rule.exclusiveMin}, ${rule.max}]`;
    }
    case 'boolean':
      return typeof value === 'boolean' ? null : 'true or false';
    case 'enum':
      return (rule.values as readonly unknown[]).includes(value)
        ? null
        : `one of ${rule.values.join(', ')}`;
    case 'list': {
      const shortest = Math.max(1, rule.minItemLength ?? 1);
      const ok =
        Array.isArray(value) &&
        value.every((item) => typeof item === 'string' && item.length >= shortest) &&
        (rule.maxItems === undefined || value.length <= rule.maxItems);
      return ok ? null : (rule.rangeNote ?? 'an array of non-empty strings');
    }
    case 'string': {
      if (typeof value !== 'string' || value.trim() === '') return 'a non-empty string';
      if (rule.pattern && !rule.pattern.test(value)) return rule.rangeNote ?? `${rule.pattern}`;
      return null;
    }
  }
}
