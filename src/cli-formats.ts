/**
 * `leaf formats`: business-number formats in `leaf_number_format` of the database of
 * `LEAF_DB_URL` (docs/formats.md, "Business numbers"), as the admin API does them: list, show,
 * create on an existing tag, widen; and decode a number under its tag's format.
 */
import { NumberFormatNotFoundError, TagNotFoundError } from 'nestjs-leaf/errors';
import {
  assertValidKey,
  checkNewNumberFormat,
  checkNumberFormatUpdate,
  decodeNumber,
} from 'nestjs-leaf/server';
import type { NewNumberFormat, NumberFormat } from 'nestjs-leaf/numbers';
import { createLeafAllocStore, TypeormNumberFormatStore } from 'nestjs-leaf/storage/typeorm';
import { formatRowJson, newFormatFromJson, NEW_FORMAT_FIELDS } from './admin/format-row.json';
import { givenFields } from './admin/json-body';
import {
  table,
  unknownSubcommand,
  usage,
  widthOption,
  withDataSource,
  type Env,
  type Output,
  type Values,
} from './cli-support';

function printFormats(formats: NumberFormat[], output: Output): void {
  if (output.json) return output.out(JSON.stringify(formats.map(formatRowJson)));
  output.out(
    table(
      [...NEW_FORMAT_FIELDS],
      formats.map((f) => [
        f.tag,
        f.mode,
        f.prefix,
        JSON.stringify(f.separator),
        f.datePattern ?? '-',
        f.timeZone,
        String(f.width),
        f.reset,
        f.description ?? '',
      ]),
    ),
  );
}

function newFormat(tag: string, values: Values): NewNumberFormat {
  const text = (name: string) => values[name] as string | undefined;
  const width = widthOption(text('width'));
  if (width === undefined) throw usage('formats create needs --width <digits>');
  const datePattern = text('date-pattern');
  // The admin routes' reading of the same fields, from the options ("none": no date).
  return newFormatFromJson({
    biz_tag: tag,
    width,
    mode: text('mode'),
    prefix: text('prefix'),
    separator: text('separator'),
    date_pattern: datePattern === 'none' ? null : datePattern,
    time_zone: text('time-zone'),
    reset: text('reset'),
    description: text('description'),
  });
}

/** Runs `leaf formats …`. @throws {CliError} or a `LeafError` (exit code 1 or 3). */
export async function formats(
  args: string[],
  values: Values,
  output: Output,
  env: Env,
): Promise<void> {
  const [sub, tag, number, ...rest] = args;
  if (rest.length > 0 || (number !== undefined && sub !== 'decode')) {
    throw usage(
      `unexpected arguments: ${[...(sub !== 'decode' && number !== undefined ? [number] : []), ...rest].join(' ')}`,
    );
  }
  // At the door, as the admin routes: a malformed tag reaches no database.
  if (tag !== undefined) assertValidKey(tag);
  const withStore = <T>(run: (store: TypeormNumberFormatStore) => Promise<T>) =>
    withDataSource(env, (dataSource) => run(new TypeormNumberFormatStore(dataSource)));
  const find = async (store: TypeormNumberFormatStore, name: string) => {
    const format = await store.findFormat(name);
    if (format === null) throw new NumberFormatNotFoundError(name);
    return format;
  };
  switch (sub) {
    case 'list':
      if (tag !== undefined) throw usage('formats list takes no argument');
      return printFormats(await withStore((store) => store.listFormats()), output);
    case 'show':
      if (tag === undefined) throw usage('formats show needs a tag');
      return printFormats([await withStore((store) => find(store, tag))], output);
    case 'create': {
      if (tag === undefined) throw usage('formats create needs a tag');
      const format = checkNewNumberFormat(newFormat(tag, values));
      const created = await withDataSource(env, async (dataSource) => {
        if ((await createLeafAllocStore(dataSource).findTag(format.tag)) === null) {
          throw new TagNotFoundError(format.tag);
        }
        return new TypeormNumberFormatStore(dataSource).createFormat(format);
      });
      return printFormats([created], output);
    }
    case 'update': {
      if (tag === undefined) throw usage('formats update needs a tag');
      const width = widthOption(values.width as string | undefined);
      const description = values.description as string | undefined;
      if (width === undefined && description === undefined) {
        throw usage('formats update needs --width <digits> and/or --description <text>');
      }
      const updated = await withStore(async (store) => {
        const next = checkNumberFormatUpdate(
          await find(store, tag),
          givenFields({ width, description }),
        );
        return store.updateFormat(tag, next.width, next.description);
      });
      return printFormats([updated], output);
    }
    case 'decode': {
      if (tag === undefined || number === undefined)
        throw usage('formats decode needs a tag and a number');
      const decoded = decodeNumber(await withStore((store) => find(store, tag)), number);
      const json = { ...decoded, counter: decoded.counter.toString() };
      if (output.json) return output.out(JSON.stringify(json));
      return output.out(
        [
          `tag        ${json.tag} (${json.mode} mode)`,
          `period     ${json.period ?? '-'}`,
          `counter    ${json.counter} (row ${json.counterTag})`,
        ].join('\n'),
      );
    }
    default:
      throw unknownSubcommand('formats', sub);
  }
}
