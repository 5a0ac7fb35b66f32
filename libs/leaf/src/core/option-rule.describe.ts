import type { OptionRule } from './option-rule';

/** The range of a rule as docs/configuration.md prints it. */
export function describeRange(rule: OptionRule): string {
  const note = 'rangeNote' in rule && rule.rangeNote ? rule.rangeNote : '';
  const join = (base: string) => (note ? `${base}; ${note}` : base);
  switch (rule.type) {
    case 'integer':
      return join(
        rule.max === Number.MAX_SAFE_INTEGER ? `≥ ${rule.min}` : `${rule.min}..${rule.max}`,
      );
    case 'fraction':
      return `(${rule.exclusiveMin}, ${rule.max}]`;
    case 'boolean':
      return 'true, false';
    case 'enum':
      return join(rule.values.join(', '));
    case 'list':
      return note || 'non-empty strings';
    case 'string':
      return note || 'non-empty';
  }
}

/** The default of a rule as docs/configuration.md prints it. */
export function describeDefault(rule: OptionRule): string {
  if ('defaultNote' in rule && rule.defaultNote) return rule.defaultNote;
  if (rule.default === null) return 'none';
  if (Array.isArray(rule.default)) return rule.default.length === 0 ? '`[]` (none)' : '';
  return `\`${typeof rule.default === 'string' ? rule.default : String(rule.default)}\``;
}
