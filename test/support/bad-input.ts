/**
 * Malformed inputs every ID route must answer with 400 `LEAF_INVALID_ARGUMENT`, touching
 * nothing. Shared by the segment and snowflake specs so both modes are held to one list.
 */

/** Keys (already URL-encoded as they appear in the path), with a label for the test name. */
export const BAD_KEYS: Array<[label: string, key: string]> = [
  ['129 characters', 'a'.repeat(129)],
  ['a space', 'a%20b'],
  ['an encoded slash', 'a%2Fb'],
  ['an encoded question mark', 'a%3Fb'],
  ['a plus sign', 'a+b'],
  ['accented letters', '%C3%A9t%C3%A9'],
  ['CJK characters', '%E8%AE%A2%E5%8D%95'],
  ['a NUL byte', 'a%00b'],
  // Rejected by Fastify's router before Nest runs; must still follow the error contract.
  ['2000 characters (past the router limit)', 'a'.repeat(2000)],
  ['a malformed escape', 'a%E0%A4%A'],
  ['a lone percent sign', '%'],
];

/** Query strings with a bad `count` for a route whose cap is `maxBatch`. */
export function badCounts(maxBatch: number): Array<[label: string, query: string]> {
  return [
    ['0', 'count=0'],
    ['-1', 'count=-1'],
    ['1.5', 'count=1.5'],
    ['1e9', 'count=1e9'],
    ['abc', 'count=abc'],
    ['hex', 'count=0x10'],
    ['empty', 'count='],
    ['missing', ''],
    ['repeated', 'count=1&count=2'],
    ['above the cap', `count=${maxBatch + 1}`],
    ['far above the cap', 'count=99999999999'],
  ];
}
