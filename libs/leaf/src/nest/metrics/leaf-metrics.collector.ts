import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { loadOptionalPeer } from '../../adapters/optional-peer';
import type { LeafObserver } from '../../core/leaf-observer';
import { gaplessMetrics } from '../gapless/gapless-metrics';
import { LEAF_GAPLESS_OPTIONS } from '../leaf.constants';
import { SegmentService } from '../segment/segment.service';
import { SequenceService } from '../sequence/sequence.service';
import { SnowflakeService } from '../snowflake/snowflake.service';
import { LeafEventRecorder } from './leaf-event.recorder';
import {
  DEFAULT_BUCKETS,
  DEFAULT_MAX_TAG_SERIES,
  GAPLESS_AGE_BUCKETS,
  type LeafMetricsOptions,
} from './leaf-metrics.options';
import { TagLabels } from './tag-labels';

export type { LeafMetricsOptions };

type Buffer = ReturnType<SegmentService['snapshot']>['buffers'][number];
type Worker = NonNullable<ReturnType<SnowflakeService['status']>['worker']>;
type SequenceStats = ReturnType<SequenceService['stats']>;

type Setter = (labels: Record<string, string>, value: number) => void;
type Register = (
  name: string,
  help: string,
  labelNames: string[],
  read: (set: Setter) => void,
) => void;
/** A per-tag series of the segment buffers' `pick` (`combine`: how tags past the cap merge). */
type PerTag = (
  pick: (b: Buffer) => number,
  combine?: (a: number, b: number) => number,
) => (set: Setter) => void;

/**
 * Leaf's metrics for prom-client, registered in a registry of the caller's choice:
 *
 * ```ts
 * const registry = new Registry();
 * app.get(LeafMetricsCollector).register(registry);
 * ```
 *
 * Gauges and counters are read from the services' monitoring snapshots at collect time
 * (scrape), so the ID hot paths carry no instrumentation: IDs issued per mode and tag come
 * from the buffers' own counters, and tags are those of `leaf_alloc` (bounded). The two
 * histograms are fed where a range load or a lease extension completes. `prom-client` is an
 * optional peer dependency, loaded only when `register` is called.
 */
@Injectable()
export class LeafMetricsCollector {
  /** A mode that is off has no service, and no series; nor have gapless series without their option. */
  constructor(
    private readonly events: LeafEventRecorder,
    @Optional() private readonly segments?: SegmentService,
    @Optional() private readonly snowflake?: SnowflakeService,
    @Optional() private readonly sequence?: SequenceService,
    @Optional() @Inject(LEAF_GAPLESS_OPTIONS) private readonly gapless?: object,
  ) {}

  /**
   * Registers Leaf's metrics in `registry` (prom-client's global `register` when left out).
   * Call once per registry. Returns a function that unregisters them.
   * @throws {LeafConfigurationError} when prom-client is not installed.
   */
  register(registry?: Registry, options: LeafMetricsOptions = {}): () => void {
    const client = loadOptionalPeer<typeof import('prom-client')>(
      'prom-client',
      'LeafMetricsCollector needs',
      'prom-client@^15',
    );
    const registers = [registry ?? client.register];
    const { events, segments, snowflake, sequence } = this;
    const names: string[] = [];
    const metric =
      (Metric: typeof client.Gauge | typeof client.Counter): Register =>
      (name, help, labelNames, read) => {
        names.push(name);
        new Metric({
          name,
          help,
          labelNames,
          registers,
          collect() {
            // Read at every scrape (a counter from a running total): reset, then each series once.
            this.reset();
            read((labels, value) => this.inc(labels, value));
          },
        });
      };
    const gauge = metric(client.Gauge);
    const counter = metric(client.Counter);
    const labels = new TagLabels(options.maxTagSeries ?? DEFAULT_MAX_TAG_SERIES);
    const byLabel = (pick: (b: Buffer) => number, combine?: (a: number, b: number) => number) =>
      labels.totals(segments?.snapshot().buffers ?? [], pick, combine);
    const perTag: PerTag = (pick, combine) => (set) => {
      for (const [tag, value] of byLabel(pick, combine)) set({ tag }, value);
    };
    const worker = () => snowflake?.status().worker ?? null;

    // Only the enabled modes' series: a label-less metric would otherwise print a 0.
    // Segment mode (the names of the app's former hand-written /metrics)
    if (segments) registerSegment(gauge, counter, segments, perTag);
    if (snowflake) registerSnowflake(gauge, counter, snowflake, worker);
    if (sequence) registerSequence(gauge, counter, sequence);
    // Every mode
    counter(
      'leaf_ids_issued_total',
      'IDs issued since start, per mode and tag (segment: tags of leaf_alloc; snowflake: tag "", keys share one sequence).',
      ['mode', 'tag'],
      (set) => {
        for (const [tag, issued] of byLabel((b) => b.issued)) set({ mode: 'segment', tag }, issued);
        const w = worker();
        if (w) set({ mode: 'snowflake', tag: '' }, w.generator.issued);
      },
    );
    counter(
      'leaf_not_ready_total',
      'Requests answered not ready (segment: no range in memory in time; snowflake: no ID without waiting).',
      ['mode'],
      (set) => {
        if (segments) set({ mode: 'segment' }, events.notReadyTotals.segment);
        if (snowflake) set({ mode: 'snowflake' }, events.notReadyTotals.snowflake);
      },
    );
    if (segments) {
      counter(
        'leaf_segment_regressions_detected_total',
        'max_id found below what was already granted, per cause: regression (below the high-water mark), unconfirmed-commit (this instance’s own uncommitted allocation), range-guard (a range refused in memory).',
        ['cause'],
        (set) => {
          for (const [cause, n] of Object.entries(events.regressionTotals.detected))
            set({ cause }, n);
        },
      );
      counter(
        'leaf_segment_regressions_repaired_total',
        'Allocations that found max_id below the high-water mark and moved it above (once per regression, by the first instance to allocate).',
        [],
        (set) => set({}, events.regressionTotals.repaired),
      );
    }
    counter(
      'leaf_clock_backwards_total',
      'Clock steps back behind the last issued millisecond: waited out, or refused (LEAF_CLOCK_MOVED_BACKWARDS).',
      ['outcome'],
      (set) => {
        if (!snowflake) return;
        set({ outcome: 'waited' }, events.clockBackwardsTotals.waited);
        set({ outcome: 'refused' }, events.clockBackwardsTotals.refused);
      },
    );

    // Histograms, fed where a load / an extension completes
    names.push(
      'leaf_segment_load_duration_seconds',
      'leaf_snowflake_lease_extension_duration_seconds',
    );
    const loads = new client.Histogram({
      name: 'leaf_segment_load_duration_seconds',
      help: 'Duration of range allocations in the database, per tag and outcome.',
      labelNames: ['tag', 'outcome'],
      buckets: options.loadBuckets ?? DEFAULT_BUCKETS,
      registers,
    });
    const extensions = new client.Histogram({
      name: 'leaf_snowflake_lease_extension_duration_seconds',
      help: 'Duration of time-lease extensions (state file and ZooKeeper), per outcome.',
      labelNames: ['outcome'],
      buckets: options.leaseBuckets ?? DEFAULT_BUCKETS,
      registers,
    });
    const sink: LeafObserver = {
      // A failed load does not prove the tag exists (an unknown sequence key fails its load).
      rangeLoaded: (tag, durationMs, ok) =>
        loads.observe(
          { tag: ok ? labels.of(tag) : labels.ifLabelled(tag), outcome: ok ? 'ok' : 'error' },
          durationMs / 1000,
        ),
      leaseExtended: (durationMs, outcome) => extensions.observe({ outcome }, durationMs / 1000),
    };
    const unsubscribe = [events.subscribe(sink)];
    if (this.gapless) {
      const buckets = options.gaplessAgeBuckets ?? GAPLESS_AGE_BUCKETS;
      const gapless = gaplessMetrics(client, registers, buckets, labels.cap);
      names.push(...gapless.names);
      unsubscribe.push(events.subscribe(gapless.sink));
    }
    return () => {
      for (const stop of unsubscribe) stop();
      for (const registry of registers) {
        for (const name of names) registry.removeSingleMetric(name);
      }
    };
  }
}

function registerSegment(
  gauge: Register,
  counter: Register,
  segments: SegmentService,
  perTag: PerTag,
): void {
  gauge('leaf_segment_initialized', 'Tag list loaded at least once.', [], (set) =>
    set({}, segments.snapshot().initialized ? 1 : 0),
  );
  gauge('leaf_segment_tags', 'Tags known to this instance.', [], (set) =>
    set({}, segments.snapshot().buffers.length),
  );
  counter(
    'leaf_segment_loads_total',
    'Ranges loaded from the database, per tag.',
    ['tag'],
    perTag((b) => b.loads),
  );
  const perTagGauges: [name: string, help: string, pick: (b: Buffer) => number][] = [
    [
      'leaf_segment_current_idle',
      'IDs left in the current segment, per tag.',
      (b) => (b.current ? Number(b.current.idle) : 0),
    ],
    ['leaf_segment_next_ready', 'Next segment loaded, per tag.', (b) => (b.next !== null ? 1 : 0)],
    ['leaf_segment_loading', 'A range load is in flight, per tag.', (b) => (b.loading ? 1 : 0)],
    [
      'leaf_segment_load_failing',
      'The last range load failed, per tag.',
      (b) => (b.lastError !== null ? 1 : 0),
    ],
  ];
  gauge(
    'leaf_segment_step',
    'Dynamic step in force, per tag (tag="_other": the largest of the tags past the cap).',
    ['tag'],
    perTag((b) => b.step, Math.max),
  );
  for (const [name, help, pick] of perTagGauges) gauge(name, help, ['tag'], perTag(pick));
}

function registerSequence(gauge: Register, counter: Register, sequence: SequenceService): void {
  const stats = () => sequence.stats();
  gauge(
    'leaf_sequence_issuer',
    'This instance is the elected issuer of the group (1) or not (0); per group, the sum over instances is 1 except during a handover.',
    ['group'],
    (set) => {
      for (const g of stats().groups) set({ group: String(g.group) }, g.state === 'issuer' ? 1 : 0);
    },
  );
  gauge(
    'leaf_sequence_lease_remaining_ms',
    'Milliseconds of issuer lease left (only the groups this instance issues for).',
    ['group'],
    (set) => {
      for (const g of stats().groups) {
        if (g.leaseRemainingMs !== null) set({ group: String(g.group) }, g.leaseRemainingMs);
      }
    },
  );
  counter(
    'leaf_sequence_handovers_total',
    'Times this instance became an issuer (elected) or stopped being one (demoted: session expired, node gone, resigned).',
    ['event'],
    (set) => {
      const s = stats();
      set({ event: 'elected' }, s.elections);
      set({ event: 'demoted' }, s.demotions);
    },
  );
  const totals: [name: string, help: string, pick: (s: SequenceStats) => number][] = [
    [
      'leaf_sequence_forwarded_calls_total',
      'Calls this instance forwarded to the issuer of their group (every attempt).',
      (s) => s.forwardedCalls,
    ],
    [
      'leaf_sequence_forward_batches_total',
      'Forwarded requests sent; leaf_sequence_forward_batch_calls_total / this = the mean batch size.',
      (s) => s.forwardBatches,
    ],
    [
      'leaf_sequence_forward_batch_calls_total',
      'Calls carried by the forwarded requests.',
      (s) => s.forwardBatchCalls,
    ],
    [
      'leaf_sequence_served_items_total',
      'Forwarded items (one key of one batch) this instance answered as issuer.',
      (s) => s.servedItems,
    ],
  ];
  for (const [name, help, pick] of totals) counter(name, help, [], (set) => set({}, pick(stats())));
}

function registerSnowflake(
  gauge: Register,
  counter: Register,
  snowflake: SnowflakeService,
  worker: () => Worker | null,
): void {
  gauge('leaf_snowflake_ready', 'An ID can be issued now.', [], (set) => {
    set({}, snowflake.readiness().ready ? 1 : 0);
  });
  gauge(
    'leaf_snowflake_worker',
    'Worker ID and mode of this instance (always 1).',
    ['worker_id', 'mode'],
    (set) => {
      const w = worker();
      if (w) set({ worker_id: String(w.workerId), mode: w.mode }, 1);
    },
  );
  /** A label-less series of the worker, none while there is no worker (or no value). */
  const ofWorker = (pick: (w: Worker) => number | undefined) => (set: Setter) => {
    const w = worker();
    const value = w ? pick(w) : undefined;
    if (value !== undefined) set({}, value);
  };
  counter(
    'leaf_snowflake_ids_total',
    'Snowflake IDs issued since start.',
    [],
    ofWorker((w) => w.generator.issued),
  );
  gauge(
    'leaf_snowflake_lease_reserved_until_ms',
    'The persisted time lease: last millisecond IDs may be issued in.',
    [],
    ofWorker((w) => w.lease.reservedUntil),
  );
  gauge(
    'leaf_snowflake_lease_degraded',
    'The lease is being extended in the local file only (ZooKeeper unreachable).',
    [],
    ofWorker((w) => (w.lease.degraded !== null ? 1 : 0)),
  );
  gauge(
    'leaf_snowflake_zookeeper_connected',
    'The ZooKeeper session is connected.',
    [],
    ofWorker((w) => (w.zookeeper ? (w.zookeeper.connected ? 1 : 0) : undefined)),
  );
}
