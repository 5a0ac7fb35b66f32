import {
  Injectable,
  StreamableFile,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { map, type Observable } from 'rxjs';

/** `T` with every `bigint`, however deep, as a decimal `string` (what {@link toIdJson} returns). */
export type IdJson<T> = T extends bigint
  ? string
  : T extends Date
    ? T
    : T extends readonly (infer U)[]
      ? IdJson<U>[]
      : T extends object
        ? { [K in keyof T]: IdJson<T[K]> }
        : T;

/**
 * A copy of `value` that `JSON.stringify` can write: every `bigint` (IDs, however deep in
 * arrays and objects) becomes its decimal string — never a `number`, which would round IDs
 * above 2^53. Objects with their own `toJSON` (e.g. `Date`), binary data, streams, files,
 * maps and sets are left as they are.
 *
 * ```ts
 * @Get('decode/:id') decode(@Param('id') id: string) {
 *   return toIdJson(this.snowflake.decode(BigInt(id))); // { id: "…", timestamp: …, … }
 * }
 * ```
 * @throws {TypeError} on a circular structure (which JSON cannot represent either).
 */
export function toIdJson<T>(value: T): IdJson<T> {
  return convert(value, new Set()) as IdJson<T>;
}

function convert(value: unknown, path: Set<object>): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object' || value === null) return value;
  if (isOpaque(value)) return value;
  if (path.has(value)) throw new TypeError('toIdJson: circular structure');
  path.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => convert(item, path));
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = convert(item, path);
    return copy;
  } finally {
    path.delete(value);
  }
}

/** Left as they are: objects with their own JSON form, binary data, streams and files. */
function isOpaque(value: object): boolean {
  return (
    typeof (value as { toJSON?: unknown }).toJSON === 'function' ||
    typeof (value as { pipe?: unknown }).pipe === 'function' ||
    ArrayBuffer.isView(value) ||
    value instanceof ArrayBuffer ||
    value instanceof StreamableFile ||
    value instanceof Map ||
    value instanceof Set ||
    value instanceof Promise
  );
}

/**
 * Applies {@link toIdJson} to what a handler returns, so a controller can return bigint IDs
 * (or `snowflake.decode(id)`) as JSON instead of failing with a 500 ("Do not know how to
 * serialize a BigInt"). Use per controller or route (`@UseInterceptors(LeafIdJsonInterceptor)`)
 * or globally (`APP_INTERCEPTOR`); strings and other primitives pass unchanged.
 */
@Injectable()
export class LeafIdJsonInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((value: unknown) => toIdJson(value)));
  }
}
