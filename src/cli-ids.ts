/**
 * `leaf ids whois <id> --mode segment|sequence|snowflake [--tag <tag>] [--url <base>]`: who
 * issued an ID, asked of a running instance over HTTP (`GET /admin/ids/{id}`, with
 * `LEAF_ADMIN_TOKEN`): the instance answers from the ID journal in its databases and its
 * worker-ID registry (docs/operations.md, "Who issued an ID").
 */
import { InvalidArgumentError } from 'nestjs-leaf/errors';
import { parseLeafId } from 'nestjs-leaf/http';
import type { IdOriginJson } from './admin/id-origin.json';
import { CliError, unknownSubcommand, usage, type Env, type Output } from './cli-support';
import { isLeafMode } from './id/count';

/** How long the CLI waits for the instance's answer. */
const REQUEST_TIMEOUT_MS = 10_000;

/** The options `ids whois` reads. */
export interface IdsOptions {
  readonly mode?: string;
  readonly tag?: string;
  readonly url?: string;
}

/** Runs `leaf ids <subcommand>`. @throws {CliError} with the exit code of a failure. */
export async function ids(
  args: string[],
  values: IdsOptions,
  output: Output,
  env: Env,
): Promise<void> {
  const [sub, id, ...rest] = args;
  if (sub !== 'whois') throw unknownSubcommand('ids', sub);
  if (id === undefined || rest.length > 0) throw usage('ids whois needs exactly one ID');
  // Checked here as the route checks it: a decimal of at most 2^63-1, never a JavaScript number.
  try {
    parseLeafId(id);
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw usage(`${error.message} (got "${id}")`);
    throw error;
  }
  const mode = values.mode;
  if (!isLeafMode(mode)) {
    throw usage('ids whois needs --mode segment, sequence or snowflake');
  }
  if (mode !== 'snowflake' && values.tag === undefined) throw usage(`${mode} IDs need --tag <tag>`);
  const token = env.LEAF_ADMIN_TOKEN?.trim();
  if (!token) throw usage('ids whois asks an instance over HTTP: set LEAF_ADMIN_TOKEN');
  const base = (values.url ?? `http://127.0.0.1:${env.PORT?.trim() || '8080'}`).replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(`${base}/admin/ids/${id}`);
  } catch {
    throw usage(`--url must be an http(s) URL (got "${base}")`);
  }
  url.searchParams.set('mode', mode);
  if (values.tag !== undefined) url.searchParams.set('tag', values.tag);
  const answer = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  }).catch((error: unknown) => {
    throw new CliError(3, `${url.origin}: ${(error as Error).message}`);
  });
  const text = await answer.text();
  if (!answer.ok) {
    const body = parse(text) as { code?: unknown; message?: unknown } | null;
    const said =
      body && typeof body.code === 'string'
        ? `[${body.code}] ${String(body.message)}`
        : `HTTP ${answer.status}`;
    // A refusal (input, unknown, no token) is 1; the instance failing is 3.
    throw new CliError(answer.status < 500 ? 1 : 3, said);
  }
  const origin = parse(text) as IdOriginJson | null;
  if (origin === null) throw new CliError(3, `${url.origin}: not a JSON answer`);
  if (output.json) return output.out(JSON.stringify(origin));
  output.out(describe(origin));
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** The answer as aligned `name  value` lines, the fields that apply only. */
export function describe(origin: IdOriginJson): string {
  const lines = Object.entries(origin)
    .filter(([, value]) => value !== null)
    .map(([name, value]) => [name, String(value)] as const);
  const width = Math.max(...lines.map(([name]) => name.length));
  return lines.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n');
}
