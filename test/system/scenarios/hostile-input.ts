/**
 * Hostile input: a few thousand requests with malformed keys (non-ASCII, `%00`, `%2F`,
 * `../`, over-long, random bytes), counts, decode arguments, methods and oversized headers,
 * against an instance serving both modes. Every answer must be a 4xx in the JSON error
 * contract (`{statusCode, code: 'LEAF_...', message}`), never a 5xx or a stack trace, and
 * nothing may be written to `leaf_alloc`.
 */
import { BAD_KEYS, badCounts } from '../../support/bad-input';
import { runBounded } from '../../support/http-client';
import type { TestDatabase } from '../../support/test-database';
import { Cluster } from '../harness/cluster';
import { rawRequest, type RawAnswer } from '../harness/raw-http';
import { bigintJson, type ScenarioSize } from './scenario';

/** One hostile request. */
export interface HostileRequest {
  readonly label: string;
  readonly method: string;
  readonly target: string | Buffer;
  readonly headers?: Record<string, string>;
}

/** A request whose answer broke the contract, with the answer. */
export interface ContractBreach {
  readonly request: string;
  readonly answer: RawAnswer;
  readonly reason: string;
}

/** Result of {@link hostileInput}. */
export interface HostileInputResult {
  readonly requests: number;
  readonly byStatus: Record<string, number>;
  readonly breaches: ContractBreach[];
  /** `leaf_alloc` before and after, as text (nothing may change). */
  readonly tableBefore: string;
  readonly tableAfter: string;
  /** Allocations the audit recorded during the run (must be none). */
  readonly allocations: number;
  readonly durationMs: number;
}

/** The app's default caps: `LEAF_MAX_BATCH` for the batch routes, `LEAF_MAX_RANGE` for the range route. */
const CAPS: Array<[route: string, cap: number]> = [
  ['/api/segment/ids/', 1000],
  ['/api/segment/range/', 1_000_000],
  ['/api/snowflake/ids/', 1000],
];

/** Keys as they go on the wire (already %-encoded, or raw bytes), none of them valid. */
function hostileKeys(fuzz: number): Array<[string, string | Buffer]> {
  const keys: Array<[string, string | Buffer]> = [...BAD_KEYS];
  keys.push(
    ['encoded ../', '..%2F'],
    ['encoded ../../etc/passwd', '..%2F..%2Fetc%2Fpasswd'],
    ['encoded backslash', '..%5C..%5Cwin'],
    ['encoded NUL alone', '%00'],
    ['NUL in the middle', 'tag%00.txt'],
    ['emoji', '%F0%9F%98%80'],
    ['overlong UTF-8 slash', '%C0%AF'],
    ['lone surrogate', '%ED%A0%80'],
    ['invalid UTF-8', '%FF%FE'],
    ['SQL', '%27%3B%20DROP%20TABLE%20leaf_alloc%3B--'],
    ['HTML', '%3Cscript%3Ealert(1)%3C%2Fscript%3E'],
    ['encoded percent', '%25'],
    ['129 dots', '.'.repeat(129)],
    ['10,000 characters', 'k'.repeat(10_000)],
    ['raw non-ASCII bytes', Buffer.from('t\u00e9st', 'utf8')],
    ['raw 0xFF byte', Buffer.from([0x74, 0xff, 0x74])],
    ['raw CJK', Buffer.from('\u8ba2\u5355', 'utf8')],
    ['tab', '%09'],
    ['newline', 'a%0Ab'],
    ['space', '%20'],
  );
  // Deterministic random bytes, %-encoded: each key holds at least one byte outside the
  // key alphabet, so none can be valid.
  let seed = 0x9e3779b9;
  const next = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % 256;
  };
  for (let i = 0; i < fuzz; i++) {
    const length = 1 + (next() % 40);
    const bytes = Array.from({ length }, next);
    bytes[next() % length] = 0x80 + (next() % 0x80);
    keys.push([`fuzz ${i}`, bytes.map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')]);
  }
  return keys;
}

/** Every hostile request; `fuzz` random keys on top of the fixed ones. */
export function hostileRequests(tag: string, fuzz: number): HostileRequest[] {
  const requests: HostileRequest[] = [];
  const idRoutes = (key: string | Buffer): Array<[string, string | Buffer]> => {
    const prefix = (path: string) =>
      typeof key === 'string' ? path + key : Buffer.concat([Buffer.from(path), key]);
    const withQuery = (target: string | Buffer, query: string) =>
      typeof target === 'string'
        ? `${target}?${query}`
        : Buffer.concat([target, Buffer.from(`?${query}`)]);
    return [
      ['segment get', prefix('/api/segment/get/')],
      ['segment ids', withQuery(prefix('/api/segment/ids/'), 'count=2')],
      ['segment range', withQuery(prefix('/api/segment/range/'), 'count=2')],
      ['snowflake get', prefix('/api/snowflake/get/')],
      ['snowflake ids', withQuery(prefix('/api/snowflake/ids/'), 'count=2')],
    ];
  };
  for (const [label, key] of hostileKeys(fuzz)) {
    for (const [route, target] of idRoutes(key)) {
      requests.push({ label: `${route}, key ${label}`, method: 'GET', target });
    }
  }
  for (const [route, cap] of CAPS) {
    for (const [label, query] of badCounts(cap)) {
      requests.push({
        label: `${route} count ${label}`,
        method: 'GET',
        target: `${route}${tag}?${query}`,
      });
    }
  }
  for (const id of [
    'abc',
    '-1',
    '1.5',
    '1e5',
    '0x10',
    '',
    '18446744073709551616',
    '99999999999999999999999',
    '%00',
    '%F0%9F%98%80',
    '1%2F2',
  ]) {
    requests.push({
      label: `decode id ${id}`,
      method: 'GET',
      target: `/decodeSnowflakeId?id=${id}`,
    });
  }
  requests.push({ label: 'decode without id', method: 'GET', target: '/decodeSnowflakeId' });
  requests.push({
    label: 'decode repeated id',
    method: 'GET',
    target: '/decodeSnowflakeId?id=1&id=2',
  });
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'FOO']) {
    for (const target of [
      `/api/segment/get/${tag}`,
      '/api/snowflake/get/k',
      `/api/segment/range/${tag}?count=2`,
    ]) {
      requests.push({ label: `${method} ${target}`, method, target });
    }
  }
  for (const [label, headers] of [
    ['a 20 KB header', { 'X-Big': 'h'.repeat(20_000) }],
    ['a 100 KB header', { 'X-Big': 'h'.repeat(100_000) }],
    [
      '500 headers',
      Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`X-H${i}`, 'v'.repeat(60)])),
    ],
    ['a 20 KB cookie', { Cookie: `c=${'c'.repeat(20_000)}` }],
    ['a 20 KB request id', { 'X-Request-Id': 'r'.repeat(20_000) }],
    ['a malformed Content-Length', { 'Content-Length': 'abc' }],
  ] as Array<[string, Record<string, string>]>) {
    for (const target of [`/api/segment/get/${tag}`, '/api/snowflake/get/k']) {
      requests.push({ label: `${label} on ${target}`, method: 'GET', target, headers });
    }
  }
  return requests;
}

/** The reason `answer` breaks the error contract, or `null`. */
function breach(request: HostileRequest, answer: RawAnswer): string | null {
  if (answer.status === 0) return `no answer (${answer.error ?? 'closed'})`;
  if (answer.status < 400 || answer.status >= 500) return `status ${answer.status}`;
  if (/\n\s+at |node_modules|\.ts:\d+|\.js:\d+/.test(answer.body))
    return 'a stack trace in the body';
  if (request.method === 'HEAD') return null; // a HEAD answer has no body
  let body: { statusCode?: unknown; code?: unknown; message?: unknown };
  try {
    body = JSON.parse(answer.body) as typeof body;
  } catch {
    return 'not JSON';
  }
  if (body.statusCode !== answer.status) return `statusCode ${String(body.statusCode)}`;
  if (typeof body.code !== 'string' || !body.code.startsWith('LEAF_'))
    return `code ${String(body.code)}`;
  if (typeof body.message !== 'string') return 'no message';
  return null;
}

/**
 * Runs every hostile request (16 at a time) against one instance serving both modes
 * (segment on `db`, snowflake with a fixed worker ID), then compares `leaf_alloc`.
 */
export async function hostileInput(
  db: TestDatabase,
  size: ScenarioSize,
): Promise<HostileInputResult> {
  const tag = 'sys-hostile';
  await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 1000)', [tag]);
  const startedAt = Date.now();
  const cluster = await Cluster.start({
    size: 1,
    env: () => ({
      LEAF_DB_URL: db.url,
      LEAF_WORKER_ID: '9',
      LEAF_SEGMENT_WARM_TAGS: tag,
      LEAF_ADMIN_TOKEN: 'system-test-admin-token-0123456789',
    }),
  });
  try {
    const port = Number(new URL(cluster.get('p0').baseUrl()!).port);
    const table = async () =>
      JSON.stringify(
        await db.query(
          'SELECT biz_tag, CAST(max_id AS CHAR) AS max_id, step FROM leaf_alloc ORDER BY biz_tag',
        ),
        bigintJson,
      );
    const tableBefore = await table();
    const [{ n: auditBefore }] = await db.query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM leaf_alloc_audit',
    );
    const requests = hostileRequests(tag, size === 'ci' ? 300 : 1500);
    const answers = await runBounded(requests.length, 16, (i) => {
      const request = requests[i]!;
      return rawRequest(port, request.method, request.target, request.headers);
    });
    const byStatus: Record<string, number> = {};
    const breaches: ContractBreach[] = [];
    answers.forEach((answer, i) => {
      byStatus[answer.status] = (byStatus[answer.status] ?? 0) + 1;
      const reason = breach(requests[i]!, answer);
      if (reason)
        breaches.push({
          request: `${requests[i]!.label}`,
          answer: { ...answer, body: answer.body.slice(0, 300) },
          reason,
        });
    });
    const tableAfter = await table();
    const [{ n: auditAfter }] = await db.query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM leaf_alloc_audit',
    );
    const result = {
      requests: requests.length,
      byStatus,
      breaches,
      tableBefore,
      tableAfter,
      allocations: Number(auditAfter) - Number(auditBefore),
      durationMs: Date.now() - startedAt,
    };
    console.log(
      `[system] hostile input (${size}): ${result.requests} requests, statuses ${JSON.stringify(byStatus)}, ` +
        `${breaches.length} contract breaches, ${result.allocations} allocations, run ${result.durationMs} ms`,
    );
    return result;
  } finally {
    await cluster.dispose();
  }
}

/** The expectations of {@link hostileInput}. */
export function expectHostileInputRefused(result: HostileInputResult): void {
  expect(result.breaches.slice(0, 20)).toEqual([]);
  expect(result.tableAfter).toBe(result.tableBefore);
  expect(result.allocations).toBe(0);
  expect(result.requests).toBeGreaterThan(1000);
}
