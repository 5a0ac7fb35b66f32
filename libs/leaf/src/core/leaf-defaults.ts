import { LEAF_OPTION_RULES, type LeafOptionPath, type RuleValue } from './leaf-option-rules';
import { checkedRule, type Problems } from './option-rule';

/** `a.b.c` with value `V` as the nested `{ a: { b: { c: V } } }`. */
type Nested<P extends string, V> = P extends `${infer H}.${infer T}`
  ? { readonly [K in H]: Nested<T, V> }
  : { readonly [K in P]: V };
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

/** Every rule's default in the nested shape of `LeafModuleOptions` (`null`: derived). */
export type LeafDefaults = Intersection<
  { [P in LeafOptionPath]: Nested<P, (typeof LEAF_OPTION_RULES)[P]['default']> }[LeafOptionPath]
>;

/** The defaults as the nested shape of `LeafModuleOptions`, read from {@link LEAF_OPTION_RULES}. */
export const LEAF_DEFAULTS: LeafDefaults = (() => {
  type Node = Record<string, unknown>;
  const root: Node = {};
  for (const [path, rule] of Object.entries(LEAF_OPTION_RULES)) {
    const keys = path.split('.');
    let node = root;
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Node;
    node[keys[keys.length - 1]!] = rule.default;
  }
  return root as LeafDefaults;
})();

/**
 * Checks `value` against the rule of `path`: `undefined` gives the rule's default (or
 * `fallback` where the default is derived); a value out of range records a problem, named
 * `label` (the option path, or the environment variable that set it), and gives the default.
 */
export function checkedOption<P extends LeafOptionPath>(
  problems: Problems,
  path: P,
  value: unknown,
  options: { label?: string; fallback?: RuleValue<P>; max?: number } = {},
): RuleValue<P> {
  return checkedRule(problems, options.label ?? path, LEAF_OPTION_RULES[path], value, options);
}
