/**
 * `nestjs-leaf/health`: readiness indicators for `@nestjs/terminus` (kept out of the main
 * entry, so that an application without health checks never loads terminus).
 *
 * Provide them in a module that imports `TerminusModule` and sees `LeafModule`'s services
 * (it imports `LeafModule`, or `LeafModule` is registered with `isGlobal: true`).
 */
export { SegmentHealthIndicator } from './nest/health/segment.health';
export { SnowflakeHealthIndicator } from './nest/health/snowflake.health';
export { SequenceHealthIndicator } from './nest/health/sequence.health';
export { GaplessHealthIndicator } from './nest/health/gapless.health';
