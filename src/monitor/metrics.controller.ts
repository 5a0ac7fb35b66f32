import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Registry } from 'prom-client';
import { METRICS_REGISTRY } from './metrics.registry';

/**
 * `GET /metrics`: the prom-client registry in Prometheus text. Leaf's series are read from
 * the generators' monitoring snapshots at scrape time, so the ID hot paths carry no
 * instrumentation (`LeafMetricsCollector`).
 */
@ApiTags('monitoring')
@Controller()
export class MetricsController {
  constructor(@Inject(METRICS_REGISTRY) private readonly registry: Registry) {}

  @Get('metrics')
  @ApiOperation({
    summary: 'Prometheus metrics',
    description:
      'Process metrics (prom-client defaults, event-loop lag included), Leaf\'s series (leaf_*) and the HTTP request-duration histogram. See docs/operations.md, "Health and metrics".',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({
    description: 'Prometheus text exposition format 0.0.4',
    schema: { type: 'string' },
  })
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
