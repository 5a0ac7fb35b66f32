/**
 * docs/getting-started.md, "The library in ten minutes", run as written: its commands in
 * order (the Nest CLI's `new`, `cd`, the installs with the packed library for `nestjs-leaf`,
 * the build, the start), its files written where their first line says, and its `curl`
 * lines sent to the started application, whose answers must be the page's. `createdb`
 * becomes a fresh database on the test PostgreSQL (`DATABASE_URL`), and `localhost:3000`
 * the port the application was given. Then what the page says around it: both migrations
 * recorded in the application's own migrations table, and a second instance on the same
 * database taking the next range.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  childEnv,
  nodeRuntime,
  run,
  RunningApp,
  StepTimes,
  writeFiles,
  type NodeRuntime,
} from '../support/consumer-app';
import { packedTempDir, packLibrary, removePackedDirs, ROOT } from '../support/packed-library';
import {
  createPostgresTestDatabase,
  type PostgresTestDatabase,
} from '../support/postgres-database';
import { commandWords, fencedBlocks, readmeSections } from '../support/readme-setup';
import { sparePort } from '../system/harness/mariadb-server';
import { describeWithServices } from '../support/services';

const MINUTE = 60_000;
const HEADING = 'The library in ten minutes';
const PAGE = join(ROOT, 'docs', 'getting-started.md');

/** One shell line as words, single quotes kept together (the page's `curl` lines). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const [, quoted, plain] of line.matchAll(/'([^']*)'|(\S+)/g)) words.push(quoted ?? plain);
  return words;
}

/** A `curl` line of the page as a request: method, path, headers, body. */
function curlRequest(line: string) {
  const words = shellWords(line);
  if (words[0] !== 'curl') throw new Error(`not a curl line: ${line}`);
  let method = 'GET';
  let url = '';
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < words.length; i++) {
    const word = words[i];
    if (word === '-s') continue;
    else if (word === '-X') method = words[++i];
    else if (word === '-H') {
      const [name, ...value] = words[++i].split(':');
      headers[name.trim()] = value.join(':').trim();
    } else if (word === '-d') body = words[++i];
    else url = word;
  }
  const path = url.replace(/^(https?:\/\/)?localhost:3000/, '');
  if (path === url) throw new Error(`the curl line does not call localhost:3000: ${line}`);
  return { method: body !== undefined && method === 'GET' ? 'POST' : method, path, headers, body };
}

describeWithServices(
  ['postgres'],
  'docs/getting-started.md, "The library in ten minutes", as written',
  () => {
    const times = new StepTimes();
    let node: NodeRuntime;
    let database: PostgresTestDatabase | undefined;
    let work: string;
    let cwd: string;
    let port: number;
    const apps: RunningApp[] = [];
    /** The page's `curl` lines: what was sent, the page's answer, the application's. */
    const exchanges: Array<{ line: string; expected: unknown; actual: unknown; status: number }> =
      [];

    const env = (): Record<string, string> => ({ DATABASE_URL: database!.url });

    beforeAll(async () => {
      const section = readmeSections(readFileSync(PAGE, 'utf8'), (heading) => heading === HEADING);
      if (section === '') throw new Error(`docs/getting-started.md: no section "## ${HEADING}"`);
      node = nodeRuntime(24);
      const tarball = packLibrary();
      work = packedTempDir('leaf-ten-minutes-');
      cwd = work;
      port = await sparePort();

      for (const block of fencedBlocks(section)) {
        if (block.lang === 'bash') {
          for (const argv of block.body.split('\n').map(commandWords)) {
            if (argv.length === 0) continue;
            if (argv[0] === 'createdb') {
              database = await createPostgresTestDatabase();
            } else if (argv[0] === 'cd') {
              cwd = join(cwd, argv[1]);
            } else if (argv.join(' ') === 'npm run start:prod') {
              apps.push(
                await times.timed('npm run start:prod', () =>
                  RunningApp.start(cwd, { node, cwd, port, env: env() }, 2 * MINUTE),
                ),
              );
            } else {
              const words = argv.map((word) => (word === 'nestjs-leaf' ? tarball : word));
              await times.timed(argv.join(' '), () =>
                run(words, { cwd, env: childEnv(node, env()), timeoutMs: 15 * MINUTE }),
              );
            }
          }
        } else if (block.lang === 'ts') {
          const [first, ...rest] = block.body.split('\n');
          const path = /^\/\/\s*(src\/\S+\.ts)\s*$/.exec(first)?.[1];
          if (!path) throw new Error(`a ts block without its path (line ${block.line})`);
          writeFiles(cwd, { [path]: `${rest.join('\n').trim()}\n` });
        } else if (block.lang === 'console') {
          const lines = block.body.split('\n');
          for (let i = 0; i < lines.length; i++) {
            if (!lines[i].startsWith('$ ')) continue;
            const line = lines[i].slice(2);
            const request = curlRequest(line);
            const response = await fetch(`http://127.0.0.1:${port}${request.path}`, {
              method: request.method,
              headers: request.headers,
              body: request.body,
            });
            exchanges.push({
              line,
              expected: JSON.parse(lines[i + 1]),
              actual: JSON.parse(await response.text()),
              status: response.status,
            });
          }
        }
      }
    }, 40 * MINUTE);

    afterAll(async () => {
      for (const app of apps) await app.stop();
      await database?.drop();
      if (!process.env.LEAF_CONSUMER_KEEP) removePackedDirs();
      console.log(times.report(HEADING));
    }, 2 * MINUTE);

    it('runs every command of the section and answers each curl line as the page shows', () => {
      expect(database).toBeDefined();
      expect(apps).toHaveLength(1);
      expect(exchanges.length).toBeGreaterThanOrEqual(2);
      for (const exchange of exchanges) {
        expect({ line: exchange.line, status: exchange.status, body: exchange.actual }).toEqual({
          line: exchange.line,
          status: expect.any(Number) as number,
          body: exchange.expected,
        });
        expect(exchange.status).toBeLessThan(300);
      }
    });

    it("records Leaf's migrations and the application's own in the application's migrations table", async () => {
      const names = (await database!.query<{ name: string }>('SELECT name FROM migrations')).map(
        (row) => row.name,
      );
      expect(names).toEqual(
        expect.arrayContaining(['CreateLeafAlloc1700000000000', 'CreateProducts1765000000000']),
      );
      const [row] = await database!.query<{ id: string }>(
        'SELECT CAST(id AS TEXT) AS id FROM products ORDER BY id LIMIT 1',
      );
      expect(row.id).toBe('1');
    });

    it('gives a second instance on the same database the next range, as the page says', async () => {
      const second = await RunningApp.start(cwd, {
        node,
        cwd,
        port: await sparePort(),
        env: env(),
      });
      apps.push(second);
      const response = await fetch(`${second.base}/products`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'coffee' }),
      });
      expect(response.status).toBe(201);
      expect(((await response.json()) as { id: string }).id).toBe('1001');
    });
  },
);
