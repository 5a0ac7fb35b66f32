import { InvalidArgumentError } from 'nestjs-leaf/errors';

/** Milliseconds since the Unix epoch, as a decimal integer (a sign allowed). */
const MS = /^-?\d{1,16}$/;
/**
 * ISO 8601 as the route and the CLI take it: a date (UTC midnight), or a date and time with `Z`
 * or an offset (a time without one would be local to whoever parses it).
 */
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:T([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,3})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/;

/**
 * An instant given as text (a query parameter, a CLI argument): ms since the Unix epoch
 * (`1767225600000`) or ISO 8601 (`2026-01-01`, `2026-01-01T08:00:00.250+08:00`). Checked at
 * the door: anything else, a day the month does not have, or ms beyond a safe integer.
 * @throws {InvalidArgumentError} naming `argument`.
 */
export function parseInstant(raw: unknown, argument: string): number {
  if (typeof raw === 'string') {
    if (MS.test(raw)) {
      const ms = Number(raw);
      if (Number.isSafeInteger(ms)) return ms;
    }
    const iso = ISO.exec(raw);
    if (iso) {
      const [year, month, day] = [iso[1], iso[2], iso[3]].map(Number) as [number, number, number];
      const ms = Date.parse(raw);
      // Date.parse rolls 2026-02-30 over into March: the day must exist.
      if (Number.isFinite(ms) && new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day) {
        return ms;
      }
    }
  }
  throw new InvalidArgumentError(
    `${argument} must be ms since the Unix epoch or an ISO 8601 date or date-time with Z or an offset`,
    argument,
  );
}
