import { assertValidKey } from '../core/arguments';
import {
  assertGaplessReason,
  assertGaplessTtl,
  gaplessNumberArgument,
} from '../core/gapless/gapless-arguments';
import type { GaplessNumber } from '../core/gapless/gapless-batch';
import { gaplessNumberFromJson } from '../core/gapless/gapless-number.json';
import type { RemoteCaller } from './remote-caller';

/** Longest TTL a server may accept (its `maxTtlMs` is at most this); the server checks its own. */
const MAX_TTL_MS = 2_147_483_647;

/**
 * Gapless series through the servers (docs/gapless.md, "Routes, CLI and operations"): `reserve`, then `confirm`
 * or `void`, each one `POST /api/gapless/{series}/…`. Every call is idempotent by its key,
 * so a call that timed out or met a 5xx is sent again to the next server, as IDs are: the
 * same key answers the same number on any instance. Arguments are checked before anything is
 * sent; a server's typed refusal comes back as the same `LeafError` class
 * (`GaplessSettledError`, `GaplessReservationExpiredError`, ...). When no server answers,
 * `GaplessBusyError`: retry with the same key (a number taken for it is answered again).
 */
export class RemoteGapless {
  constructor(private readonly caller: RemoteCaller) {}

  /**
   * The number `key` holds in `series`, reserved now for `ttlMs` (the server's default when
   * left out) if the key is new.
   * @throws {InvalidArgumentError} for a malformed series, key or TTL; the server's `LeafError`.
   */
  reserve(series: string, key: string, ttlMs?: number): Promise<GaplessNumber> {
    return this.call(series, 'reserve', key, () => {
      if (ttlMs !== undefined) assertGaplessTtl(ttlMs, MAX_TTL_MS);
      return { key, ...(ttlMs !== undefined ? { ttlMs } : {}) };
    });
  }

  /** Confirms the number `key` reserved (idempotent). @throws as {@link reserve}. */
  confirm(series: string, number: bigint | string, key: string): Promise<GaplessNumber> {
    return this.call(series, 'confirm', key, () => ({
      number: gaplessNumberArgument(number).toString(),
      key,
    }));
  }

  /** Voids the number `key` reserved, with `reason` (idempotent). @throws as {@link reserve}. */
  void(
    series: string,
    number: bigint | string,
    key: string,
    reason: string,
  ): Promise<GaplessNumber> {
    return this.call(series, 'void', key, () => {
      assertGaplessReason(reason);
      return { number: gaplessNumberArgument(number).toString(), key, reason };
    });
  }

  private async call(
    series: string,
    action: 'reserve' | 'confirm' | 'void',
    key: string,
    body: () => { key: string; number?: string },
  ): Promise<GaplessNumber> {
    assertValidKey(series);
    assertValidKey(key);
    const sent = body();
    return this.caller.send({
      path: `/api/gapless/${encodeURIComponent(series)}/${action}`,
      body: JSON.stringify(sent),
      context: {
        mode: 'gapless',
        key: series,
        gapless: { key, ...(sent.number !== undefined ? { number: sent.number } : {}) },
      },
      decode: (answer) => gaplessNumberFromJson(answer, series, key),
    });
  }
}
