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
  ['a NUL byte alone', '%00'],
  ['a control character (0x01)', 'a%01b'],
  ['an escape (0x1B)', '%1B%5B31m'],
  ['a newline', 'a%0Ab'],
  ['DEL', 'a%7F'],
  ['a C1 control (U+0085)', 'a%C2%85b'],
  ['a lone surrogate (CESU-8)', 'a%ED%A0%80b'],
  ['invalid UTF-8', 'a%FF%FEb'],
  ['an overlong UTF-8 slash', '%C0%AF'],
];

/** Keys as a JSON body carries them (decoded), none of them valid. */
export const BAD_KEY_TEXTS: Array<[label: string, key: unknown]> = [
  ['empty', ''],
  ['129 characters', 'k'.repeat(129)],
  ['a NUL byte', 'a\u0000b'],
  ['a NUL byte alone', '\u0000'],
  ['a control character', 'a\u0001b'],
  ['DEL', 'a\u007f'],
  ['a C1 control', 'a\u0085'],
  ['a lone high surrogate', 'a\ud800'],
  ['a lone low surrogate', '\udc00b'],
  ['a space', 'a b'],
  ['accented letters', '\u00e9t\u00e9'],
  ['a number', 42],
  ['null', null],
];

/** Free text (descriptions) that is refused: NUL, control characters, lone surrogates, too long. */
export const BAD_TEXTS: Array<[label: string, text: unknown]> = [
  ['a NUL byte', 'before\u0000after'],
  ['a NUL byte alone', '\u0000'],
  ['a control character', 'a\u0001b'],
  ['an ANSI escape', '\u001b[31mred'],
  ['a carriage return', 'line\rline'],
  ['DEL', 'a\u007f'],
  ['a C1 control', 'a\u0085'],
  ['a lone high surrogate', 'a\ud800b'],
  ['a lone low surrogate', '\udc00'],
  ['257 characters', 'd'.repeat(257)],
  ['a number', 42],
];

/**
 * Text of a database or driver error, which no answer may carry (PostgreSQL's and MariaDB's
 * messages and codes, TypeORM's error class, the wrappers that quoted them).
 */
export const DATABASE_TEXT =
  /invalid byte sequence|\bER_[A-Z]|Incorrect string value|QueryFailedError|syntax error|SQLSTATE|violates|duplicate key|ECONNREFUSED|leaf_number_format:|Allocation for tag/;

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

/** The routes an unknown key reaches (the flood suites, round-robin over the keys). */
export const UNKNOWN_KEY_ROUTES: ReadonlyArray<(key: string) => string> = [
  (key) => `/api/segment/get/${key}`,
  (key) => `/api/sequence/get/${key}`,
  (key) => `/api/sequence/ids/${key}?count=2`,
  (key) => `/api/segment/range/${key}?count=10`,
  (key) => `/api/segment/number/${key}`,
  (key) => `/api/sequence/numbers/${key}?count=2`,
  (key) => `/api/number/decode/${key}?number=X-000001`,
];
