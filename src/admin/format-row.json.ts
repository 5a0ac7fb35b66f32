import type { NewNumberFormat, NumberFormat } from 'nestjs-leaf/numbers';
import { InvalidArgumentError } from 'nestjs-leaf/errors';
import { givenFields } from './json-body';

/** A business-number format on the wire (admin routes and the CLI), in the table's words. */
export interface FormatRowJson {
  biz_tag: string;
  mode: NumberFormat['mode'];
  prefix: string;
  separator: string;
  date_pattern: NumberFormat['datePattern'];
  time_zone: string;
  width: number;
  reset: NumberFormat['reset'];
  description: string | null;
}

/** The JSON of a format: shared by the admin routes and the CLI. */
export function formatRowJson(format: NumberFormat): FormatRowJson {
  return {
    biz_tag: format.tag,
    mode: format.mode,
    prefix: format.prefix,
    separator: format.separator,
    date_pattern: format.datePattern,
    time_zone: format.timeZone,
    width: format.width,
    reset: format.reset,
    description: format.description,
  };
}

/** The fields of a new format, in the wire's words. */
export const NEW_FORMAT_FIELDS = [
  'biz_tag',
  'mode',
  'prefix',
  'separator',
  'date_pattern',
  'time_zone',
  'width',
  'reset',
  'description',
] as const;

/**
 * A new format from wire fields (strings as given; the library checks every value and names
 * the one that is wrong).
 * @throws {InvalidArgumentError} for a field of the wrong JSON type.
 */
export function newFormatFromJson(body: Record<string, unknown>): NewNumberFormat {
  const text = (name: string): string | undefined => {
    const value = body[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw new InvalidArgumentError(`${name} must be a string`, name);
    return value;
  };
  if (typeof body.biz_tag !== 'string') {
    throw new InvalidArgumentError('biz_tag must be a string', 'biz_tag');
  }
  const datePattern = body.date_pattern === null ? null : text('date_pattern');
  const description = body.description === null ? null : text('description');
  return {
    tag: body.biz_tag,
    width: widthField(body.width),
    ...givenFields({
      mode: text('mode') as NewNumberFormat['mode'] | undefined,
      prefix: text('prefix'),
      separator: text('separator'),
      datePattern: datePattern as NewNumberFormat['datePattern'] | undefined,
      timeZone: text('time_zone'),
      reset: text('reset') as NewNumberFormat['reset'] | undefined,
      description,
    }),
  };
}

/**
 * A width given as a JSON number (docs/formats.md: `"width": 6`, never `"6"`); the library
 * checks that it is an integer in range.
 * @throws {InvalidArgumentError} for anything else.
 */
export function widthField(value: unknown): number {
  if (typeof value === 'number') return value;
  throw new InvalidArgumentError('width must be a JSON number (an integer)', 'width');
}
