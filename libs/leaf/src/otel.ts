/**
 * `nestjs-leaf/otel`: Leaf's OpenTelemetry spans (`LeafTracing`, provided by `LeafModule`),
 * their names and attributes. `@opentelemetry/api` is an optional peer dependency, loaded
 * only when `LeafTracing.enable()` is called.
 */
export { LeafTracing, type LeafTracingOptions } from './nest/telemetry/leaf-tracing';
export {
  LEAF_SPAN_ATTRIBUTES,
  LEAF_SPAN_NAMES,
  LEAF_TRACER_NAME,
} from './adapters/otel/leaf-span-names';
