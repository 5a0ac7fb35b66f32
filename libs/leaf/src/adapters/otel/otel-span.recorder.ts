import type { Attributes, Span, SpanKind, SpanStatusCode, Tracer } from '@opentelemetry/api';
import { LeafError } from '../../core/errors/leaf.error';
import type { LeafObserver, RangeLoadDetail } from '../../core/leaf-observer';
import { LEAF_SPAN_ATTRIBUTES as A, LEAF_SPAN_NAMES as N } from './leaf-span-names';

/** The two enum values of `@opentelemetry/api` this recorder needs (read from the loaded module). */
export interface OtelEnums {
  readonly SpanStatusCode: typeof SpanStatusCode;
  readonly SpanKind: typeof SpanKind;
}

/**
 * A {@link LeafObserver} that turns Leaf's completed operations into OpenTelemetry spans:
 * range loads, lease extensions, issuer elections and forwarded batches. Each span is started
 * and ended when the operation has completed, with its measured duration (the observer is told
 * only then, so the ID paths carry nothing); it is a child of the context active where the
 * operation completed. Never called per ID.
 */
export class OtelSpanRecorder implements LeafObserver {
  constructor(
    private readonly tracer: Tracer,
    private readonly enums: OtelEnums,
  ) {}

  rangeLoaded(tag: string, durationMs: number, ok: boolean, detail?: RangeLoadDetail): void {
    const attributes: Attributes = { [A.tag]: tag, [A.mode]: detail?.mode ?? 'segment' };
    if (detail?.step !== undefined) attributes[A.step] = detail.step;
    if (detail?.range) {
      attributes[A.rangeStart] = detail.range.start.toString();
      attributes[A.rangeEnd] = detail.range.end.toString();
    }
    this.record(N.allocate, durationMs, attributes, ok ? null : (detail?.error ?? 'failed'));
  }

  leaseExtended(durationMs: number, outcome: 'ok' | 'degraded' | 'error', error?: unknown): void {
    const failure = outcome === 'error' ? (error ?? 'failed') : null;
    this.record(N.leaseExtend, durationMs, { [A.leaseOutcome]: outcome }, failure);
  }

  issuerElected(group: number, term: number): void {
    this.record(N.elected, 0, { [A.group]: group, [A.term]: term }, null);
  }

  issuerDemoted(group: number, reason: string): void {
    this.record(N.demoted, 0, { [A.group]: group, [A.reason]: reason }, null);
  }

  batchForwarded(
    address: string,
    calls: number,
    items: number,
    durationMs: number,
    error: unknown,
  ): void {
    const attributes = { [A.issuer]: address, [A.calls]: calls, [A.items]: items };
    this.record(N.forward, durationMs, attributes, error, this.enums.SpanKind.CLIENT);
  }

  private record(
    name: string,
    durationMs: number,
    attributes: Attributes,
    error: unknown,
    kind: SpanKind = this.enums.SpanKind.INTERNAL,
  ): void {
    const end = Date.now();
    const span: Span = this.tracer.startSpan(name, {
      kind,
      attributes,
      startTime: end - Math.max(0, durationMs),
    });
    if (error !== null && error !== undefined) {
      const code = error instanceof LeafError ? error.code : 'UNKNOWN';
      span.setAttribute(A.errorCode, code);
      if (error instanceof Error) span.recordException(error);
      span.setStatus({ code: this.enums.SpanStatusCode.ERROR, message: code });
    }
    span.end(end);
  }
}
