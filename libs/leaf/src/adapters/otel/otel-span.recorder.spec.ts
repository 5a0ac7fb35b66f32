import * as api from '@opentelemetry/api';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { LeafErrorCode } from '../../core/errors/leaf.error';
import { SequenceNoIssuerError } from '../../core/errors/sequence.error';
import { TimeLeaseUnavailableError } from '../../core/errors/time-lease-unavailable.error';
import { LEAF_TRACER_NAME } from './leaf-span-names';
import { OtelSpanRecorder } from './otel-span.recorder';

/** The recorder on a real SDK tracer: the error paths and the timing (the module wiring: nest/telemetry). */
describe('OtelSpanRecorder', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const recorder = new OtelSpanRecorder(provider.getTracer(LEAF_TRACER_NAME), api);
  afterEach(() => exporter.reset());
  afterAll(() => provider.shutdown());

  const only = () => {
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(1);
    return spans[0]!;
  };
  const ms = (time: api.HrTime) => time[0] * 1000 + time[1] / 1e6;

  it('a failed lease extension: status ERROR with LEAF_TIME_LEASE_UNAVAILABLE, the exception as an event', () => {
    const error = new TimeLeaseUnavailableError(3, Date.now(), 'ZooKeeper did not answer');
    recorder.leaseExtended(12, 'error', error);
    const span = only();
    expect(span.name).toBe('leaf.snowflake.lease.extend');
    expect(span.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: LeafErrorCode.TIME_LEASE_UNAVAILABLE,
    });
    expect(span.attributes).toEqual({
      'leaf.lease.outcome': 'error',
      'leaf.error.code': LeafErrorCode.TIME_LEASE_UNAVAILABLE,
    });
    // The SDK takes an error's `code` as the exception's type.
    expect(span.events.map((event) => event.attributes?.['exception.type'])).toEqual([
      LeafErrorCode.TIME_LEASE_UNAVAILABLE,
    ]);
    // Started when the operation started: its measured duration.
    expect(ms(span.endTime) - ms(span.startTime)).toBeCloseTo(12, 0);
  });

  it('a degraded extension is not an error', () => {
    recorder.leaseExtended(3, 'degraded');
    expect(only().status.code).toBe(SpanStatusCode.UNSET);
    expect(only().attributes).toEqual({ 'leaf.lease.outcome': 'degraded' });
  });

  it('an undelivered forwarded batch: a CLIENT span with status ERROR; a non-Leaf error is UNKNOWN', () => {
    recorder.batchForwarded('http://b:8080', 4, 2, 30, new SequenceNoIssuerError('k', 'refused'));
    const span = only();
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: LeafErrorCode.SEQUENCE_NO_ISSUER,
    });
    exporter.reset();
    recorder.batchForwarded('http://b:8080', 1, 1, 30, new Error('ECONNREFUSED'));
    expect(only().status).toEqual({ code: SpanStatusCode.ERROR, message: 'UNKNOWN' });
    expect(only().attributes['leaf.error.code']).toBe('UNKNOWN');
  });

  it('a range load with the step asked for, and a failed one without an error object', () => {
    recorder.rangeLoaded('order', 5, true, {
      mode: 'segment',
      step: 2000,
      range: { start: 9007199254740993n, end: 9007199254742993n },
      error: null,
    });
    expect(only().attributes).toEqual({
      'leaf.tag': 'order',
      'leaf.mode': 'segment',
      'leaf.step': 2000,
      'leaf.range.start': '9007199254740993',
      'leaf.range.end': '9007199254742993',
    });
    exporter.reset();
    recorder.rangeLoaded('order', 5, false);
    expect(only().status).toEqual({ code: SpanStatusCode.ERROR, message: 'UNKNOWN' });
  });
});
