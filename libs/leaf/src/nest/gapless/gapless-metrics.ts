/**
 * Gapless series' metrics (docs/gapless.md, "Routes, CLI and operations"), fed where a transaction that
 * settled reservations committed: how old each reservation was when it was confirmed or
 * voided, and the voids by reason. Every label is bounded: series past the cap share
 * `_other`, and so do the callers' reasons past a few.
 */
import type { Registry } from 'prom-client';
import { GAPLESS_EXPIRED_REASON } from '../../core/gapless/gapless-batch';
import type { LeafObserver } from '../../core/leaf-observer';
import { TagLabels } from '../metrics/tag-labels';

/** Callers' void reasons with a label of their own, at most; later ones are `other`. */
export const GAPLESS_REASON_LABELS = 8;
/** The label of every reason past {@link GAPLESS_REASON_LABELS}, or not label-like. */
export const OTHER_REASON_LABEL = 'other';

/**
 * Registers `leaf_gapless_reservation_age_seconds` and `leaf_gapless_voids_total` in
 * `registers`; returns their names and the sink that feeds them.
 */
export function gaplessMetrics(
  client: typeof import('prom-client'),
  registers: Registry[],
  buckets: number[],
  maxSeries: number,
): { names: string[]; sink: LeafObserver } {
  const series = new TagLabels(maxSeries);
  /** The reasons with a label of their own: the first few short ones seen. */
  const own = new Set<string>();
  /** The `reason` label: `expired`, one of {@link own}, else `other`. */
  const reasonLabel = (reason: string | null): string => {
    if (reason === GAPLESS_EXPIRED_REASON || own.has(reason ?? '')) return reason!;
    if (reason === null || own.size >= GAPLESS_REASON_LABELS) return OTHER_REASON_LABEL;
    if (!/^[A-Za-z0-9_.:-]{1,32}$/.test(reason)) return OTHER_REASON_LABEL;
    own.add(reason);
    return reason;
  };
  const ages = new client.Histogram({
    name: 'leaf_gapless_reservation_age_seconds',
    help: 'Age of gapless reservations when they were confirmed or voided (database clock), per series and outcome.',
    labelNames: ['series', 'outcome'],
    buckets,
    registers,
  });
  const voids = new client.Counter({
    name: 'leaf_gapless_voids_total',
    help: 'Gapless numbers voided, per series and reason (expired: the TTL ran out; the callers’ first few short reasons; other).',
    labelNames: ['series', 'reason'],
    registers,
  });
  const sink: LeafObserver = {
    gaplessSettled: (name, state, reason, ageMs) => {
      const label = series.of(name);
      ages.observe({ series: label, outcome: state }, Math.max(0, ageMs) / 1000);
      if (state === 'voided') voids.inc({ series: label, reason: reasonLabel(reason) });
    },
  };
  return { names: ['leaf_gapless_reservation_age_seconds', 'leaf_gapless_voids_total'], sink };
}
