import { Injectable, Optional, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { parseLeafId } from '../../core/leaf-id-text';

/** Options of {@link ParseLeafIdPipe}. */
export interface ParseLeafIdPipeOptions {
  /**
   * What the handler receives: the ID as a `bigint`, or its (validated) decimal string.
   * @default 'bigint'
   */
  readonly as?: 'bigint' | 'string';
}

/**
 * Validates an ID parameter (path, query or body field): a positive decimal integer of at most
 * 2^63 − 1, without sign, spaces or leading zeros, never read through a JavaScript number.
 *
 * ```ts
 * @Get('orders/:id')
 * find(@Param('id', ParseLeafIdPipe) id: bigint) { ... }
 * // or keep the string: @Param('id', new ParseLeafIdPipe({ as: 'string' })) id: string
 * ```
 *
 * A malformed value throws `InvalidArgumentError` (`LEAF_INVALID_ARGUMENT`), which
 * `LeafExceptionFilter` answers with 400; its `argument` is the parameter's name.
 */
@Injectable()
export class ParseLeafIdPipe implements PipeTransform<unknown, bigint | string> {
  private readonly as: 'bigint' | 'string';

  /** `options` is optional for Nest's injector too (`@Param('id', ParseLeafIdPipe)`). */
  constructor(@Optional() options?: ParseLeafIdPipeOptions) {
    this.as = options?.as ?? 'bigint';
  }

  /** @throws {InvalidArgumentError} for a value that is not a valid ID. */
  transform(value: unknown, metadata?: ArgumentMetadata): bigint | string {
    const id = parseLeafId(value, metadata?.data ?? 'id');
    return this.as === 'bigint' ? id : (value as string);
  }
}
