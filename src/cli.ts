/**
 * `leaf`: tag, business-number format and gapless series administration and snowflake inspection for
 * operators without HTTP access.
 *
 *   node dist/src/cli.js <command> [options]      (npm run leaf -- <command> [options])
 *
 * Reads the application's variables: LEAF_DB_URL (tags; workers leased there), LEAF_ZK_ADDRESS
 * and LEAF_NAME (workers), LEAF_ADMIN_TOKEN and PORT (`ids whois`, over HTTP). Exit codes: 0 done; 1 refused (a typed error: the tag exists, is unknown, the
 * input is invalid); 2 usage or configuration error; 3 the database or ZooKeeper failed.
 */
import { parseArgs } from 'node:util';
import { LeafError, type LeafAllocStore } from 'nestjs-leaf';
import { redactSecrets } from 'nestjs-leaf/errors';
import { createLeafAllocStore } from 'nestjs-leaf/storage/typeorm';
import type { LeafAllocRow } from 'nestjs-leaf/ports';
import { assertValidKey } from 'nestjs-leaf/server';
import { givenFields } from './admin/json-body';
import { stepNumber, tagRowJson, TAG_ROW_COLUMNS } from './admin/tag-row.json';
import { secretValues } from './config/app-env';
import {
  CliError,
  USAGE,
  integerOption,
  table,
  unknownSubcommand,
  usage,
  withDataSource,
  type Env,
  type Output,
  type Values,
} from './cli-support';
import { formats } from './cli-formats';
import { bounds, decode } from './cli-snowflake';
import { workers } from './cli-workers';
import { tokens } from './cli-tokens';
import { ids, type IdsOptions } from './cli-ids';
import { gapless, numbers } from './cli-gapless';

function printRows(rows: LeafAllocRow[], output: Output): void {
  if (output.json) return output.out(JSON.stringify(rows.map(tagRowJson)));
  output.out(
    table(
      [...TAG_ROW_COLUMNS],
      rows.map((r) => TAG_ROW_COLUMNS.map((column) => String(tagRowJson(r)[column] ?? ''))),
    ),
  );
}

function stepOption(value: string | undefined): number | undefined {
  const step = integerOption(value, 'step');
  return step === undefined ? undefined : stepNumber(step);
}

async function withStore<T>(env: Env, run: (store: LeafAllocStore) => Promise<T>): Promise<T> {
  return withDataSource(env, (dataSource) => run(createLeafAllocStore(dataSource)));
}

async function tags(args: string[], values: Values, output: Output, env: Env): Promise<void> {
  const [sub, tag, ...rest] = args;
  if (rest.length > 0) throw usage(`unexpected arguments: ${rest.join(' ')}`);
  // At the door, as the admin routes: a malformed tag reaches no database.
  if (tag !== undefined) assertValidKey(tag);
  const text = (name: string) => values[name] as string | undefined;
  switch (sub) {
    case 'list':
      if (tag !== undefined) throw usage('tags list takes no argument');
      return printRows(await withStore(env, (store) => store.listAll()), output);
    case 'show': {
      if (tag === undefined) throw usage('tags show needs a tag');
      const row = await withStore(env, (store) => store.findTag(tag));
      if (!row)
        throw new CliError(1, `[LEAF_TAG_NOT_FOUND] Tag "${tag}" does not exist in leaf_alloc`);
      return printRows([row], output);
    }
    case 'create': {
      if (tag === undefined) throw usage('tags create needs a tag');
      const step = stepOption(text('step'));
      if (step === undefined) throw usage('tags create needs --step <n>');
      const maxId = integerOption(text('max-id'), 'max-id');
      const row = await withStore(env, (store) =>
        store.createTag({ tag, step, ...givenFields({ maxId, description: text('description') }) }),
      );
      return printRows([row], output);
    }
    case 'update': {
      if (tag === undefined) throw usage('tags update needs a tag');
      if (text('max-id') !== undefined) throw usage('max_id cannot be changed: it only ever grows');
      const step = stepOption(text('step'));
      const description = text('description');
      if (step === undefined && description === undefined) {
        throw usage('tags update needs --step <n> and/or --description <text>');
      }
      const row = await withStore(env, (store) =>
        store.updateTag(tag, givenFields({ step, description })),
      );
      return printRows([row], output);
    }
    default:
      throw unknownSubcommand('tags', sub);
  }
}

export interface CliIo {
  /** The variables the commands read (LEAF_DB_URL, LEAF_ZK_ADDRESS, …); nothing else is read. */
  readonly env: Env;
  /** One line of output (stdout when run as `leaf`). */
  readonly out: (text: string) => void;
  /** One line of error output (stderr when run as `leaf`). */
  readonly err: (text: string) => void;
  /** All of standard input (`tokens hash` reads the token there). @default empty */
  readonly input?: () => Promise<string>;
}

/** Reads all of the process's standard input. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** The commands but `tokens` (which reads standard input), by name. */
const COMMANDS: Record<
  string,
  (args: string[], values: Values & IdsOptions, output: Output, env: Env) => unknown
> = {
  tags,
  decode,
  bounds,
  formats,
  ids,
  gapless,
  workers: (args, _values, output, env) => workers(args, output, env),
  numbers: (args, _values, output, env) => numbers(args, output, env),
};

/** The process's own environment, stdout and stderr: how `leaf` runs. */
const processIo: CliIo = {
  env: process.env,
  out: (text) => process.stdout.write(`${text}\n`),
  // A failed connection may quote LEAF_DB_URL or the admin token: never in clear.
  err: (text) => process.stderr.write(`${redactSecrets(text, secretValues(process.env))}\n`),
  input: readStdin,
};

/**
 * Runs one command line; resolves with the exit code (see the top of this file). Reads only
 * `io.env` and writes only through `io.out`/`io.err`, so it can run inside another process.
 */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({
        args: argv,
        allowPositionals: true,
        options: {
          json: { type: 'boolean' },
          help: { type: 'boolean', short: 'h' },
          step: { type: 'string' },
          'max-id': { type: 'string' },
          description: { type: 'string' },
          epoch: { type: 'string' },
          layout: { type: 'string' },
          'data-center-bits': { type: 'string' },
          mode: { type: 'string' },
          prefix: { type: 'string' },
          separator: { type: 'string' },
          'date-pattern': { type: 'string' },
          'time-zone': { type: 'string' },
          width: { type: 'string' },
          reset: { type: 'string' },
          tag: { type: 'string' },
          url: { type: 'string' },
          period: { type: 'string' },
          'external-code': { type: 'string' },
          'corrections-of': { type: 'string' },
        },
      });
    } catch (error) {
      throw usage((error as Error).message);
    }
    const { values, positionals } = parsed;
    const [command, ...args] = positionals;
    if (values.help || command === 'help') {
      io.out(USAGE);
      return 0;
    }
    const output: Output = { json: values.json === true, out: io.out };
    if (command === 'tokens') {
      await tokens(args, output, io.input ?? (() => Promise.resolve('')));
    } else if (command !== undefined && Object.hasOwn(COMMANDS, command)) {
      await COMMANDS[command](args, values, output, io.env);
    } else {
      throw usage(command === undefined ? 'no command given' : `unknown command "${command}"`);
    }
    return 0;
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`leaf: ${error.message}`);
      return error.exitCode;
    }
    if (error instanceof LeafError) {
      // A refusal (input, exists, unknown) is 1; configuration 2; a database failure is 3.
      const failed =
        error.code === 'LEAF_ALLOCATION_FAILED' || error.code === 'LEAF_ALLOCATION_LOCK_TIMEOUT';
      io.err(`leaf: [${error.code}] ${error.message}`);
      return failed ? 3 : error.code === 'LEAF_CONFIGURATION' ? 2 : 1;
    }
    io.err(`leaf: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 3;
  }
}

if (require.main === module) {
  void runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
