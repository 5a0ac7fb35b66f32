/**
 * Secrets never leave (docs/security.md, "Secrets"): the application started as a deployer
 * does, by environment, with a password in every URL variable and the admin token set —
 * refused starts (a mistyped scheme, a database that does not exist) and accepted ones (the
 * trust-authenticated test PostgreSQL takes any password) — and every line it writes and
 * every answer it gives searched for each secret.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { APP_ENV } from '../src/config/app-env';
import { sparePort, tempDir } from './support/app';
import { AppProcess, killAllAppProcesses } from './support/app-process';
import { createPostgresTestDatabase, type PostgresTestDatabase } from './support/postgres-database';
import { describeWithServices, POSTGRES_TEST_URL } from './support/services';

/** Every variable that holds a URL a password can be written into. */
const URL_VARIABLES = [
  'LEAF_DB_URL',
  'LEAF_DB_URLS',
  'LEAF_SEGMENT_HIGH_WATER_DB_URL',
  'LEAF_REGION_DB_URL',
  'LEAF_SEQUENCE_ADVERTISE',
];

/** A region leasing data-centre ID 1 from the registry at `url`. */
const region = (url: string): Record<string, string> => ({
  LEAF_REGION: 'eu',
  LEAF_REGION_DB_URL: url,
  LEAF_REGION_DATA_CENTER_ID: '1',
  LEAF_SNOWFLAKE_DATA_CENTER_BITS: '1',
});

const ADMIN_TOKEN = 'admin-token-that-must-stay-home-4d1f';
const CLUSTER_SECRET = 'cluster-secret-that-must-stay-home-0123456789';
const CLIENT_TOKEN = 'client-token-that-must-stay-home-9e8d';
/** One client allowed everything, known to the server by its token's SHA-256 only. */
const CLIENT_TOKENS = JSON.stringify([
  {
    name: 'everything',
    sha256: createHash('sha256').update(CLIENT_TOKEN).digest('hex'),
    modes: ['*'],
    tags: ['*'],
  },
]);

/** A distinct password per use, so a leak names its source. */
const password = (label: string): string => `Pw-${label}-7f3a9c`;

/** `postgres://postgres:<password>@host:port/<database>` on the test server. */
function postgresUrl(database: string, secret: string): string {
  const url = new URL(POSTGRES_TEST_URL);
  url.username = 'postgres';
  url.password = secret;
  url.pathname = `/${database}`;
  return url.toString();
}

/** GET `path` on 127.0.0.1:`port`; the status line, headers and body as one text. */
function fetchText(port: number, path: string, headers: Record<string, string> = {}) {
  return new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(`${res.statusCode} ${JSON.stringify(res.headers)}\n${body}`));
    });
    req.on('error', reject);
    req.end();
  });
}

const PATHS = [
  '/health/ready',
  '/health/ready/segment',
  '/api/segment/get/leaf-segment-test',
  '/api/segment/get/no-such-tag',
  '/api/segment/ids/leaf-segment-test?count=0',
  '/api/snowflake/get/x',
  '/metrics',
  '/docs-json',
  '/no/such/route',
];
const ADMIN_PATHS = ['/admin/tags', '/admin/workers', '/db', '/cache'];

describeWithServices(['postgres'], 'secrets never reach a log line or an answer', () => {
  const databases: PostgresTestDatabase[] = [];
  const state = tempDir('leaf-secrets');

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) databases.push(await createPostgresTestDatabase());
  });

  afterAll(async () => {
    await killAllAppProcesses();
    for (const database of databases) await database.drop();
    state.remove();
  });

  it('covers every URL variable of the configuration', () => {
    const urls = APP_ENV.map((variable) => variable.name).filter((name) =>
      /_URLS?$|ADVERTISE$/.test(name),
    );
    expect(urls.filter((name) => name !== 'LEAF_SNOWFLAKE_ADVERTISE').sort()).toEqual(
      [...URL_VARIABLES].sort(),
    );
  });

  const base = (): Record<string, string> => ({
    PORT: '0',
    HOST: '127.0.0.1',
    LEAF_STATE_DIR: state.path,
    LEAF_ADMIN_TOKEN: ADMIN_TOKEN,
    LEAF_LOG_LEVEL: 'trace',
  });

  const refusals: Array<[string, () => Record<string, string>, string[]]> = [
    [
      'LEAF_DB_URL with a mistyped scheme',
      () => ({ LEAF_DB_URL: `postgress://leaf:${password('db-url')}@127.0.0.1:5432/leaf` }),
      [password('db-url')],
    ],
    [
      'LEAF_DB_URL naming a database that does not exist',
      () => ({ LEAF_DB_URL: postgresUrl('leaf_no_such_database', password('missing')) }),
      [password('missing')],
    ],
    [
      'LEAF_DB_URLS with one bad URL',
      () => ({
        LEAF_DB_URLS: `${postgresUrl(databases[0].name, password('urls-a'))},postgress://u:${password('urls-b')}@h/db`,
      }),
      [password('urls-a'), password('urls-b')],
    ],
    [
      'LEAF_SEGMENT_HIGH_WATER_DB_URL with a mistyped scheme',
      () => ({
        LEAF_DB_URL: postgresUrl(databases[0].name, password('hw-main')),
        LEAF_SEGMENT_HIGH_WATER_DB_URL: `postgress://u:${password('hw')}@127.0.0.1/marks`,
      }),
      [password('hw-main'), password('hw')],
    ],
    [
      'LEAF_REGION_DB_URL with a mistyped scheme',
      () => ({
        LEAF_DB_URL: postgresUrl(databases[0].name, password('region-main')),
        ...region(`postgress://u:${password('region')}@127.0.0.1/regions`),
      }),
      [password('region-main'), password('region')],
    ],
    [
      'LEAF_SEQUENCE_ADVERTISE with credentials',
      () => ({
        LEAF_DB_URL: postgresUrl(databases[0].name, password('seq-main')),
        LEAF_SEQUENCE_ENABLED: 'true',
        LEAF_SEQUENCE_ADVERTISE: `htp://peer:${password('advertise')}@127.0.0.1:1`,
      }),
      [password('seq-main'), password('advertise')],
    ],
  ];

  it.each(refusals)(
    'a refused start (%s) exits 1 and prints no secret',
    async (_, env, secrets) => {
      const exit = await AppProcess.run({ ...base(), ...env() }, { timeoutMs: 60_000 });
      expect(exit.code).toBe(1);
      const output = exit.stdout + exit.stderr;
      expect(output).toMatch(/Leaf failed to start|LEAF_/);
      for (const secret of [...secrets, ADMIN_TOKEN]) expect(output).not.toContain(secret);
    },
  );

  it.each([
    [
      'LEAF_DB_URL and LEAF_SEGMENT_HIGH_WATER_DB_URL',
      () => ({
        LEAF_DB_URL: postgresUrl(databases[0].name, password('accepted-db')),
        LEAF_SEGMENT_HIGH_WATER_DB_URL: postgresUrl(databases[1].name, password('accepted-hw')),
      }),
      [password('accepted-db'), password('accepted-hw')],
    ],
    [
      'LEAF_DB_URL and LEAF_REGION_DB_URL',
      () => ({
        LEAF_DB_URL: postgresUrl(databases[0].name, password('accepted-main')),
        ...region(postgresUrl(databases[1].name, password('accepted-region'))),
      }),
      [password('accepted-main'), password('accepted-region')],
    ],
    [
      'LEAF_DB_URLS',
      () => ({
        LEAF_DB_URLS: [
          postgresUrl(databases[0].name, password('accepted-urls-a')),
          postgresUrl(databases[2].name, password('accepted-urls-b')),
        ].join(','),
        LEAF_SNOWFLAKE_ENABLED: 'false',
      }),
      [password('accepted-urls-a'), password('accepted-urls-b')],
    ],
    [
      'sequence mode with LEAF_CLUSTER_SECRET and LEAF_CLIENT_TOKENS',
      () => ({
        LEAF_DB_URL: postgresUrl(databases[2].name, password('accepted-sequence')),
        LEAF_SEQUENCE_ENABLED: 'true',
        LEAF_CLUSTER_SECRET: CLUSTER_SECRET,
        LEAF_CLIENT_TOKENS: CLIENT_TOKENS,
      }),
      [password('accepted-sequence'), CLUSTER_SECRET, CLIENT_TOKEN],
    ],
  ] as Array<[string, () => Record<string, string>, string[]]>)(
    'an accepted start (%s) logs and answers no secret, through requests and a stop',
    async (_, env, secrets) => {
      const chosen = await sparePort();
      const vars: Record<string, string> = {
        ...base(),
        LEAF_DB_MIGRATE: 'true',
        LEAF_ACCESS_LOG: 'true',
        ...env(),
      };
      if (vars.LEAF_SEQUENCE_ENABLED) {
        vars.PORT = String(chosen);
        vars.LEAF_SEQUENCE_ADVERTISE = `http://127.0.0.1:${chosen}`;
      }
      const app = AppProcess.spawn(vars, { timeoutMs: 90_000 });
      const port = await app.listening();
      const client: Record<string, string> = vars.LEAF_CLIENT_TOKENS
        ? { authorization: `Bearer ${CLIENT_TOKEN}` }
        : {};
      const answers: string[] = [];
      for (const path of PATHS) answers.push(await fetchText(port, path, client));
      if (vars.LEAF_SEQUENCE_ENABLED) {
        answers.push(await fetchText(port, '/api/sequence/get/no-such-tag', client));
        answers.push(await fetchText(port, '/api/sequence/internal/instance'));
        answers.push(await fetchText(port, '/api/segment/get/no-such-tag'));
      }
      for (const path of ADMIN_PATHS) {
        answers.push(
          await fetchText(port, path, {
            authorization: `Bearer ${ADMIN_TOKEN}`,
            accept: 'application/json',
          }),
        );
      }
      answers.push(await fetchText(port, '/admin/tags', { authorization: 'Bearer wrong-token-x' }));
      const exit = await app.stop();
      expect(exit.code).toBe(0);
      // The routes answered (an empty output would prove nothing).
      expect(answers.join('\n')).toContain('"code":"LEAF_TAG_NOT_FOUND"');
      expect(exit.stdout).toContain('Leaf listening on');
      for (const secret of [...secrets, ADMIN_TOKEN]) {
        expect(exit.stdout + exit.stderr).not.toContain(secret);
        for (const answer of answers) expect(answer).not.toContain(secret);
      }
    },
  );
});
