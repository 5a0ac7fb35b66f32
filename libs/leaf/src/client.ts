/**
 * `nestjs-leaf/client`: the remote client, framework-free. It loads no `@nestjs/*`, TypeORM,
 * ZooKeeper, database driver or native addon, and installs with none of them (every peer
 * dependency is optional; checked on the packed tarball by test/consumer.e2e-spec.ts): a
 * service that takes IDs from Leaf servers needs only Node. The Nest module around it is
 * `LeafClientModule` (`nestjs-leaf/client/nest`, or `nestjs-leaf`).
 */
export { LeafClient, type LeafClientStats } from './client/leaf-client';
export type {
  LeafClientOptionPath,
  LeafClientOptions,
  ResolvedLeafClientOptions,
} from './client/leaf-client.options';
export { LEAF_CLIENT_OPTION_RULES, resolveLeafClientOptions } from './client/leaf-client.options';
export type { LeafTransport, TransportAnswer } from './core/http/leaf-transport.port';
export type { ServerSnapshot } from './client/server-pool';
export {
  NodeHttpTransport,
  type NodeHttpTransportOptions,
} from './adapters/http/node-http.transport';
export { IdService, type IdTextsOptions, type LeafMode } from './core/id.service';
export { SegmentGenerator } from './core/segment/segment-generator';
export type { Clock } from './core/clock';
export type { SnowflakeTimeBounds } from './core/snowflake/snowflake-time-bounds';

// The errors the client raises: the servers' own classes and codes
export { LeafError, LeafErrorCode } from './core/errors/leaf.error';
export { RemoteLeafError } from './core/errors/remote-leaf.error';
export { leafErrorFromBody, type RemoteRequestContext } from './core/errors/leaf-error-from-body';
export { LeafConfigurationError } from './core/errors/leaf-configuration.error';
export { InvalidArgumentError } from './core/errors/invalid-argument.error';
export { TagNotFoundError } from './core/errors/tag-not-found.error';
export { UnauthorizedError } from './core/errors/unauthorized.error';
export { ForbiddenError } from './core/errors/forbidden.error';
export { RateLimitedError } from './core/errors/rate-limited.error';
export { ModeDisabledError } from './core/errors/mode-disabled.error';
export { SegmentNotReadyError } from './core/errors/segment-not-ready.error';
export { SnowflakeNotReadyError } from './core/errors/snowflake-not-ready.error';
export {
  TimeBeforeEpochError,
  TimeBeyondLayoutError,
} from './core/errors/time-outside-layout.error';
export { SegmentNotInitializedError } from './core/errors/segment-not-initialized.error';
export { AllocationError, AllocationLockTimeoutError } from './core/errors/allocation.error';
export { ShuttingDownError } from './core/errors/shutting-down.error';
export { SequenceLeaseExpiredError, SequenceNoIssuerError } from './core/errors/sequence.error';
export {
  NumberFormatExistsError,
  NumberFormatNotFoundError,
} from './core/errors/number-format.error';
export type { NumberMode } from './core/numbers/number-format';
export type { RemoteGapless } from './client/remote-gapless';
export type { GaplessNumber } from './core/gapless/gapless-batch';
export type { GaplessState } from './core/gapless/gapless-store.port';
// Every gapless error (the module exports nothing else).
export * from './core/errors/gapless.error';
