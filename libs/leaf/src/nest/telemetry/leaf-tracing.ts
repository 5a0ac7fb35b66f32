import { Injectable } from '@nestjs/common';
import type { Tracer } from '@opentelemetry/api';
import { LEAF_TRACER_NAME } from '../../adapters/otel/leaf-span-names';
import { OtelSpanRecorder } from '../../adapters/otel/otel-span.recorder';
import { loadOptionalPeer } from '../../adapters/optional-peer';
import { LeafEventRecorder } from '../metrics/leaf-event.recorder';

type OtelApi = typeof import('@opentelemetry/api');

/** Options of {@link LeafTracing.enable}. */
export interface LeafTracingOptions {
  /**
   * The OpenTelemetry `TracerProvider` Leaf takes its tracer (`nestjs-leaf`) from.
   * @default the global provider of `@opentelemetry/api` (`trace.getTracerProvider()`)
   */
  readonly tracerProvider?: { getTracer(name: string, version?: string): unknown };
}

/**
 * Leaf's OpenTelemetry spans, switched on by the application (as `LeafMetricsCollector`'s
 * metrics are), before `app.init()` / `app.listen()` so that the start-up loads are traced too:
 *
 * ```ts
 * const app = await NestFactory.create(AppModule, new FastifyAdapter());
 * app.get(LeafTracing).enable();
 * await app.listen(8080);
 * ```
 *
 * Spans: range loads (`leaf.segment.allocate`), snowflake lease extensions
 * (`leaf.snowflake.lease.extend`), sequence issuer elections (`leaf.sequence.elected`,
 * `leaf.sequence.demoted`) and forwarded batches (`leaf.sequence.forward`); never per ID.
 * `@opentelemetry/api` is an optional peer dependency, loaded only by `enable()`; without an
 * SDK registered its tracer is a no-op.
 */
@Injectable()
export class LeafTracing {
  constructor(private readonly events: LeafEventRecorder) {}

  /**
   * Starts recording spans; returns the function that stops it. Each call adds one recorder
   * (two calls with two providers record into both).
   * @throws {LeafConfigurationError} when `@opentelemetry/api` is not installed.
   */
  enable(options: LeafTracingOptions = {}): () => void {
    const api = loadOptionalPeer<OtelApi>(
      '@opentelemetry/api',
      'LeafTracing needs',
      '@opentelemetry/api@^1',
    );
    const provider = options.tracerProvider ?? api.trace.getTracerProvider();
    const tracer = provider.getTracer(LEAF_TRACER_NAME) as Tracer;
    return this.events.subscribe(new OtelSpanRecorder(tracer, api));
  }
}
