import { createHash } from 'node:crypto';
import type { GaplessChainHead, GaplessRecord } from './gapless-store.port';

/** The `prev_hash` of a series' first record: 64 zeros. */
export const GAPLESS_GENESIS_HASH = '0'.repeat(64);

/** The chain of a series before its first record. */
export const GAPLESS_GENESIS: GaplessChainHead = { seq: 0n, hash: GAPLESS_GENESIS_HASH };

/**
 * A record's hash (docs/gapless.md, "The journal"): SHA-256, in lowercase hex, of the JSON
 * array `[prevHash, series, seq, periodKey, number, action, reason, key, at]` — numbers as
 * decimal strings, absent values as `null` — so no two different records print the same text.
 */
export function gaplessRecordHash(series: string, record: Omit<GaplessRecord, 'hash'>): string {
  const canonical = JSON.stringify([
    record.prevHash,
    series,
    record.seq.toString(),
    record.periodKey,
    record.number.toString(),
    record.action,
    record.reason,
    record.key,
    String(record.at),
  ]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** `record` chained after `head`: its `seq`, `prevHash` and `hash`. */
export function chainedRecord(
  series: string,
  head: GaplessChainHead,
  record: Omit<GaplessRecord, 'seq' | 'prevHash' | 'hash'>,
): GaplessRecord {
  const unsigned = { ...record, seq: head.seq + 1n, prevHash: head.hash };
  return { ...unsigned, hash: gaplessRecordHash(series, unsigned) };
}
