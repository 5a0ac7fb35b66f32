import { SegmentNotReadyError } from '../core/errors/segment-not-ready.error';
import { SequenceNoIssuerError } from '../core/errors/sequence.error';
import type { NumberMode } from '../core/numbers/number-format';
import type { RemoteRequest } from './remote-caller';

/**
 * The request of `LeafClient.businessNumbers`: `GET /api/{mode}/numbers/{tag}?count=N`
 * (docs/formats.md, "Business numbers"), answered `{"key","numbers":[..]}`; every number a
 * non-empty string. No server answering is `SegmentNotReadyError` (segment) or
 * `SequenceNoIssuerError` (sequence), as for the modes' IDs.
 */
export function businessNumbersRequest(
  mode: NumberMode,
  tag: string,
  count: number,
  timeoutMs: number,
): RemoteRequest<string[]> {
  return {
    path: `/api/${mode}/numbers/${encodeURIComponent(tag)}?count=${count}`,
    context: { mode, key: tag },
    timeoutMs,
    decode: (body) => {
      const { numbers } = JSON.parse(body) as { numbers?: unknown };
      if (
        !Array.isArray(numbers) ||
        numbers.length !== count ||
        numbers.some((n) => typeof n !== 'string' || n.length === 0)
      ) {
        throw new Error('not the numbers asked for');
      }
      return numbers as string[];
    },
    unavailable: (cause) =>
      mode === 'sequence'
        ? new SequenceNoIssuerError(tag, 'no server answered', { cause })
        : new SegmentNotReadyError(tag, { cause }),
  };
}
