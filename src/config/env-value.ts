import { ruleProblem, type OptionRule } from 'nestjs-leaf/server';

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

/**
 * The typed value of `raw` under `rule`, or a problem: text to integer (decimal digits),
 * boolean (true/false, 1/0, yes/no, on/off), list (comma-separated); then the rule's range.
 */
export function parseEnvValue(
  rule: OptionRule,
  raw: string,
): { value: unknown } | { problem: string } {
  let value: unknown = raw;
  switch (rule.type) {
    case 'integer':
      value = /^\d+$/.test(raw) ? Number(raw) : NaN;
      break;
    case 'fraction':
      value = Number(raw);
      break;
    case 'boolean': {
      const lower = raw.toLowerCase();
      value = TRUE.includes(lower) ? true : FALSE.includes(lower) ? false : raw;
      break;
    }
    case 'enum':
      value = raw.toLowerCase();
      break;
    case 'list':
      value = raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
      break;
    case 'string':
      break;
  }
  const problem = ruleProblem(rule, value);
  return problem === null ? { value } : { problem };
}
