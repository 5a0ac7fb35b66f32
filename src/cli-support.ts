/**
 * What the commands of the `leaf` CLI (src/cli.ts) share: the usage text, the error with its
 * exit code, the output, the table layout and the database of `LEAF_DB_URL`.
 */
import { DataSource } from 'typeorm';
import { loadAppConfig } from './config/app-config';
import { buildDataSourceOptions } from './database/data-source.options';

export const USAGE = `Usage: leaf <command> [options]

Commands:
  tags list                                   every tag: biz_tag, max_id, step, description, update_time
  tags show <tag>                             one tag
  tags create <tag> --step <n> [--max-id <n>] [--description <text>]
                                              a new tag (max_id default 1); never overwrites one
  tags update <tag> [--step <n>] [--description <text>]
                                              change step and/or description (never max_id)
  decode <id> [--epoch <ms>] [--layout leaf|js-safe] [--data-center-bits <n>]
                                              the timestamp, data centre, worker ID and sequence of a snowflake ID
                                              (layout defaults: LEAF_SNOWFLAKE_LAYOUT, LEAF_SNOWFLAKE_DATA_CENTER_BITS)
  bounds <from> [<to>] [--epoch <ms>] [--layout leaf|js-safe] [--data-center-bits <n>]
                                              the smallest and largest snowflake ID and UUIDv7 of [from, to] (ms or
                                              ISO 8601, both inclusive): a primary-key range for a time interval
  workers                                     snowflake workers (ZooKeeper or leaf_worker_lease): ID, holder, until when, liveness
  formats list                                business-number formats
  formats show <tag>                          one format
  formats create <tag> --width <digits> [--prefix <text>] [--separator -|_|.|/|''] [--date-pattern yyyyMMdd|yyyyMM|yyyy|none]
                 [--time-zone <IANA zone>] [--reset none|day|month|year] [--mode segment|sequence] [--description <text>]
                                              a format on an existing tag (defaults: separator "-", UTC, reset = the date's unit)
  formats update <tag> [--width <digits>] [--description <text>]
                                              widen a format (the width only grows) and/or describe it
  formats decode <tag> <number>               the period and counter of a business number
  gapless series list                         gapless series (docs/gapless.md)
  gapless series create <name> [--prefix <text>] [--width <digits>] [--period none|year|month] [--time-zone <IANA zone>]
                 [--external-code <code>] [--corrections-of <series>]
                                              a series (defaults: width 6, period none, UTC); never changed afterwards
  numbers verify <series>                     a gapless series' gap report (issued, confirmed, voided, pending), its
                                              accounting and record chain; exit code 4 when it does not verify
  tokens hash                                 the SHA-256 of the client token on standard input, for LEAF_CLIENT_TOKENS
                                              (e.g. openssl rand -base64 32 | tee token.txt | leaf tokens hash)
  ids whois <id> --mode segment|sequence|snowflake [--tag <tag>] [--url http://host:port]
                                              who issued an ID: range, instance, term; or worker-ID holder, epoch, when
                                              (asks a running instance: GET /admin/ids/{id} with LEAF_ADMIN_TOKEN;
                                              --url default http://127.0.0.1:PORT)

Options:
  --json                                      machine-readable output (IDs as decimal strings)
  -h, --help                                  this text

Environment: LEAF_DB_URL (tags, formats, gapless series; workers leased there), LEAF_ZK_ADDRESS and LEAF_NAME (workers), LEAF_ZK_CONNECT_TIMEOUT_MS,
LEAF_ADMIN_TOKEN and PORT (ids).
Exit codes: 0 done, 1 refused (typed error), 2 usage or configuration, 3 database, ZooKeeper or instance failed,
4 numbers verify found the series broken.`;

/** A failure with its exit code and message. */
export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}

export const usage = (message: string) => new CliError(2, `${message}\n\n${USAGE}`);

/** A command's subcommand missing or unknown. */
export const unknownSubcommand = (command: string, sub: string | undefined) =>
  usage(
    sub === undefined ? `${command} needs a subcommand` : `unknown subcommand "${command} ${sub}"`,
  );

/** `--width <digits>` (the library checks the range). @throws {CliError} (usage) for anything else. */
export function widthOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,3}$/.test(value)) throw usage(`--width must be an integer (got "${value}")`);
  return Number(value);
}

/** `--name value` as an integer. @throws {CliError} (usage) for anything else. */
export function integerOption(value: string | undefined, name: string): bigint | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d{1,20}$/.test(value)) throw usage(`--${name} must be an integer (got "${value}")`);
  return BigInt(value);
}

/** `read()`, its configuration error (a `LeafConfigurationError`) a {@link CliError} with exit code 2. */
export function configured<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new CliError(2, `configuration: ${(error as Error).message}`);
  }
}

/** The variables a command reads (the process environment when run as `leaf`). */
export type Env = Readonly<Record<string, string | undefined>>;

/** The options of the command line, by name. */
export type Values = Record<string, string | boolean | undefined>;

export interface Output {
  json: boolean;
  out: (text: string) => void;
}

/** Plain-text table: a header line and aligned columns. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** The one database of `LEAF_DB_URL`, opened for `run`, closed after it. */
export async function withDataSource<T>(
  env: Env,
  run: (dataSource: DataSource) => Promise<T>,
): Promise<T> {
  const { segment } = configured(() => loadAppConfig({ ...env, LEAF_SNOWFLAKE_ENABLED: 'false' }));
  if (segment.urls !== null) {
    // A tag created in one database only, with the class of one database, would clash.
    throw new CliError(
      2,
      'configuration: the CLI works on one database: set LEAF_DB_URL=<one of LEAF_DB_URLS> and unset LEAF_DB_URLS (several databases: docs/operations.md, "Several databases per tag")',
    );
  }
  const database = segment.database;
  const dataSource = new DataSource(buildDataSourceOptions(database));
  try {
    await dataSource.initialize();
  } catch (error) {
    throw new CliError(3, `cannot open the database: ${(error as Error).message}`);
  }
  try {
    return await run(dataSource);
  } finally {
    await dataSource.destroy().catch(() => undefined);
  }
}
