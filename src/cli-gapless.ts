/**
 * `leaf gapless series …` and `leaf numbers verify`: gapless series in the database of
 * `LEAF_DB_URL` (docs/gapless.md), as the admin API does them: create, list, and verify a
 * series' accounting and record chain with its gap report.
 */
import { assertValidKey, createGaplessSeries, verifyGaplessSeries } from 'nestjs-leaf/server';
import {
  GAPLESS_DEFAULTS,
  TypeormGaplessStore,
  type GaplessPeriod,
  type GaplessReport,
  type GaplessSeries,
} from 'nestjs-leaf/gapless';
import {
  CliError,
  table,
  usage,
  widthOption,
  withDataSource,
  type Env,
  type Output,
  type Values,
} from './cli-support';

function withStore<T>(env: Env, run: (store: TypeormGaplessStore) => Promise<T>): Promise<T> {
  return withDataSource(env, (dataSource) =>
    run(new TypeormGaplessStore(dataSource, GAPLESS_DEFAULTS.lockWaitMs)),
  );
}

function printSeries(series: GaplessSeries[], output: Output): void {
  if (output.json) return output.out(JSON.stringify(series));
  output.out(
    table(
      ['name', 'prefix', 'width', 'period', 'timeZone', 'externalCode', 'correctionsOf'],
      series.map((s) => [
        s.name,
        JSON.stringify(s.prefix),
        String(s.width),
        s.period,
        s.timeZone,
        s.externalCode ?? '-',
        s.correctionsOf ?? '-',
      ]),
    ),
  );
}

/** Runs `leaf gapless series create|list`. @throws {CliError} or a `LeafError`. */
export async function gapless(
  args: string[],
  values: Values,
  output: Output,
  env: Env,
): Promise<void> {
  const [group, sub, name, ...rest] = args;
  if (group !== 'series') throw usage('gapless needs a subcommand: series create|list');
  if (rest.length > 0) throw usage(`unexpected arguments: ${rest.join(' ')}`);
  const text = (option: string) => values[option] as string | undefined;
  switch (sub) {
    case 'list':
      if (name !== undefined) throw usage('gapless series list takes no argument');
      return printSeries(await withStore(env, (store) => store.listSeries()), output);
    case 'create': {
      if (name === undefined) throw usage('gapless series create needs a name');
      const width = widthOption(text('width'));
      const created = await withStore(env, (store) =>
        createGaplessSeries(store, {
          name,
          prefix: text('prefix'),
          width,
          period: text('period') as GaplessPeriod | undefined,
          timeZone: text('time-zone'),
          externalCode: text('external-code'),
          correctionsOf: text('corrections-of'),
        }),
      );
      return printSeries([created], output);
    }
    default:
      throw usage(
        sub === undefined ? 'gapless series needs create or list' : `unknown subcommand "${sub}"`,
      );
  }
}

const listed = (items: string[]) => (items.length === 0 ? 'none' : items.join(' '));

/** The report as text: the gap report, then what is wrong. */
function reportLines(report: GaplessReport): string[] {
  return [
    `series               ${report.series}`,
    `issued               ${report.issued}`,
    `confirmed            ${report.confirmed}`,
    `voided               ${report.voided}`,
    `pending              ${report.pending}`,
    `records              ${report.records}`,
    `missing              ${listed(report.missing)}`,
    `duplicates           ${listed(report.duplicates)}`,
    `voids without reason ${listed(report.voidsWithoutReason)}`,
    `unrecorded           ${listed(report.unrecorded)}`,
    `chain                ${report.chainBrokenAt === undefined ? 'intact' : `broken at record ${report.chainBrokenAt}`}`,
    `result               ${report.ok ? 'OK' : 'BROKEN'}`,
  ];
}

/**
 * Runs `leaf numbers verify <series>`: prints the report; exit code 4 when the series does not
 * verify (a number missing or twice, a void without reason, an unrecorded settlement, a broken
 * chain). @throws {CliError} or a `LeafError`.
 */
export async function numbers(args: string[], output: Output, env: Env): Promise<void> {
  const [sub, series, ...rest] = args;
  if (sub !== 'verify') throw usage('numbers needs a subcommand: verify <series>');
  if (series === undefined || rest.length > 0) throw usage('numbers verify needs one series');
  // At the door, as the admin routes: a malformed name reaches no database.
  assertValidKey(series);
  const report = await withStore(env, (store) => verifyGaplessSeries(store, series));
  output.out(output.json ? JSON.stringify(report) : reportLines(report).join('\n'));
  if (!report.ok) throw new CliError(4, `series "${series}" does not verify (see the report)`);
}
