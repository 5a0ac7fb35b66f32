import { Controller, Get, Header } from '@nestjs/common';
import { SegmentService, SnowflakeService } from 'nestjs-leaf';
import { renderPrometheus, type MetricFamily } from './prometheus';

/**
 * `GET /metrics`: Prometheus text built from the generators' monitoring snapshots at
 * scrape time, so the ID hot paths carry no instrumentation.
 */
@Controller()
export class MetricsController {
  constructor(
    private readonly segments: SegmentService,
    private readonly snowflake: SnowflakeService,
  ) {}

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): string {
    return renderPrometheus([...this.segmentFamilies(), ...this.snowflakeFamilies()]);
  }

  private segmentFamilies(): MetricFamily[] {
    if (!this.segments.enabled) return [];
    const snapshot = this.segments.snapshot();
    const buffers = snapshot.buffers;
    const perTag = (pick: (b: (typeof buffers)[number]) => number | bigint | boolean) =>
      buffers.map((b) => ({ labels: { tag: b.tag }, value: pick(b) }));
    return [
      {
        name: 'leaf_segment_initialized',
        help: 'Tag list loaded at least once.',
        type: 'gauge',
        samples: [{ value: snapshot.initialized }],
      },
      {
        name: 'leaf_segment_tags',
        help: 'Tags known to this instance.',
        type: 'gauge',
        samples: [{ value: buffers.length }],
      },
      {
        name: 'leaf_segment_loads_total',
        help: 'Ranges loaded from the database, per tag.',
        type: 'counter',
        samples: perTag((b) => b.loads),
      },
      {
        name: 'leaf_segment_step',
        help: 'Dynamic step in force, per tag.',
        type: 'gauge',
        samples: perTag((b) => b.step),
      },
      {
        name: 'leaf_segment_current_idle',
        help: 'IDs left in the current segment, per tag.',
        type: 'gauge',
        samples: perTag((b) => (b.current ? BigInt(b.current.idle) : 0)),
      },
      {
        name: 'leaf_segment_next_ready',
        help: 'Next segment loaded, per tag.',
        type: 'gauge',
        samples: perTag((b) => b.next !== null),
      },
      {
        name: 'leaf_segment_loading',
        help: 'A range load is in flight, per tag.',
        type: 'gauge',
        samples: perTag((b) => b.loading),
      },
      {
        name: 'leaf_segment_load_failing',
        help: 'The last range load failed, per tag.',
        type: 'gauge',
        samples: perTag((b) => b.lastError !== null),
      },
    ];
  }

  private snowflakeFamilies(): MetricFamily[] {
    if (!this.snowflake.enabled) return [];
    const status = this.snowflake.status();
    const worker = status.worker;
    const families: MetricFamily[] = [
      {
        name: 'leaf_snowflake_ready',
        help: 'An ID can be issued now.',
        type: 'gauge',
        samples: [{ value: status.readiness.ready }],
      },
    ];
    if (!worker) return families;
    const labels = { worker_id: String(worker.workerId), mode: worker.mode };
    families.push(
      {
        name: 'leaf_snowflake_worker',
        help: 'Worker ID and mode of this instance (always 1).',
        type: 'gauge',
        samples: [{ labels, value: 1 }],
      },
      {
        name: 'leaf_snowflake_ids_total',
        help: 'IDs issued since start.',
        type: 'counter',
        samples: [{ value: worker.generator.issued }],
      },
      {
        name: 'leaf_snowflake_lease_reserved_until_ms',
        help: 'The persisted time lease: last millisecond IDs may be issued in.',
        type: 'gauge',
        samples: [{ value: worker.lease.reservedUntil }],
      },
      {
        name: 'leaf_snowflake_lease_degraded',
        help: 'The lease is being extended in the local file only (ZooKeeper unreachable).',
        type: 'gauge',
        samples: [{ value: worker.lease.degraded !== null }],
      },
    );
    if (worker.zookeeper) {
      families.push({
        name: 'leaf_snowflake_zookeeper_connected',
        help: 'The ZooKeeper session is connected.',
        type: 'gauge',
        samples: [{ value: worker.zookeeper.connected }],
      });
    }
    return families;
  }
}
