/**
 * The `leaf` commands that read snowflake IDs without an instance (src/cli.ts): `decode <id>`,
 * what an ID says; `bounds <from> [<to>]`, the IDs of a time interval (docs/snowflake.md, "IDs
 * for a time"). Both take the layout from `--layout`, `--data-center-bits` and `--epoch`.
 */
import { DEFAULT_SNOWFLAKE_EPOCH, SnowflakeLayout } from 'nestjs-leaf';
import { snowflakeTimeBounds } from 'nestjs-leaf/formats';
import { JS_SAFE_EPOCH, LEAF_OPTION_RULES, SNOWFLAKE_LAYOUTS } from 'nestjs-leaf/server';
import { snowflakeLayoutOption } from './config/leaf-options.mapping';
import { integerOption, usage, type Env, type Output } from './cli-support';
import { parseInstant } from './id/instant';

type Values = Record<string, unknown>;

/** The layout of the command line: `--layout`, `--data-center-bits`, `--epoch`, then the environment's. */
function layoutOf(values: Values, env: Env): SnowflakeLayout {
  const name = String(
    values.layout ?? env.LEAF_SNOWFLAKE_LAYOUT ?? LEAF_OPTION_RULES['snowflake.layout'].default,
  );
  if (name !== 'leaf' && name !== 'js-safe') throw usage(`unknown layout "${name}"`);
  const dcBits = integerOption(
    (values['data-center-bits'] as string | undefined) ?? env.LEAF_SNOWFLAKE_DATA_CENTER_BITS,
    'data-center-bits',
  );
  const spec = snowflakeLayoutOption(name, Number(dcBits ?? 0n))!;
  const epoch = integerOption(values.epoch as string | undefined, 'epoch');
  return new SnowflakeLayout(
    epoch !== undefined
      ? Number(epoch)
      : name === 'js-safe'
        ? JS_SAFE_EPOCH
        : DEFAULT_SNOWFLAKE_EPOCH,
    typeof spec === 'string' ? SNOWFLAKE_LAYOUTS[spec] : spec,
  );
}

/** `leaf decode <id>`: timestamp, data centre, worker ID and sequence. */
export function decode(args: string[], values: Values, output: Output, env: Env): void {
  if (args.length !== 1) throw usage('decode needs exactly one ID');
  const decoded = layoutOf(values, env).decode(args[0]);
  const json = {
    id: decoded.id.toString(),
    timestamp: decoded.timestamp,
    isoDate: decoded.date.toISOString(),
    dataCenterId: decoded.dataCenterId,
    workerId: decoded.workerId,
    sequence: decoded.sequence,
  };
  if (output.json) return output.out(JSON.stringify(json));
  output.out(
    [
      `id         ${json.id}`,
      `timestamp  ${json.timestamp} (${json.isoDate})`,
      `dataCenter ${json.dataCenterId}`,
      `workerId   ${json.workerId}`,
      `sequence   ${json.sequence}`,
    ].join('\n'),
  );
}

/**
 * `leaf bounds <from> [<to>]`: the smallest and largest snowflake ID and UUIDv7 of the
 * interval, as `GET /api/snowflake/bounds` answers (JSON with `--json`).
 * @throws {InvalidArgumentError} / `TimeBeforeEpochError` / `TimeBeyondLayoutError` (exit 1).
 */
export function bounds(args: string[], values: Values, output: Output, env: Env): void {
  if (args.length < 1 || args.length > 2) throw usage('bounds needs <from> and at most a <to>');
  const from = parseInstant(args[0], 'from');
  const to = args.length === 2 ? parseInstant(args[1], 'to') : from;
  const b = snowflakeTimeBounds(layoutOf(values, env), from, to);
  const json = { ...b, min: b.min.toString(), max: b.max.toString() };
  if (output.json) return output.out(JSON.stringify(json));
  const iso = (ms: number) => new Date(ms).toISOString();
  output.out(
    [
      `from     ${b.from} (${iso(b.from)})`,
      `to       ${b.to} (${iso(b.to)})`,
      `min      ${json.min}`,
      `max      ${json.max}`,
      `uuidMin  ${b.uuidMin}`,
      `uuidMax  ${b.uuidMax}`,
    ].join('\n'),
  );
}
