import type { Clock } from '../core/clock';
import { SnowflakeGenerator, type SnowflakeLeaseGate } from '../core/snowflake/snowflake-generator';
import {
  DEFAULT_SNOWFLAKE_EPOCH,
  JS_SAFE_EPOCH,
  JS_SAFE_LAYOUT,
  LEAF_LAYOUT,
  SnowflakeLayout,
} from '../core/snowflake/snowflake-layout';
import type { SnowflakeSettings } from '../core/snowflake/snowflake-settings';

/** Leaf's own layout (41 timestamp bits, 10 worker bits, 12 sequence bits). */
export const leafLayout = new SnowflakeLayout(DEFAULT_SNOWFLAKE_EPOCH);

/** The layout whose IDs stay within JavaScript's safe integers. */
export const jsSafeLayout = new SnowflakeLayout(JS_SAFE_EPOCH, JS_SAFE_LAYOUT);

/** Leaf's bits with 3 of the worker bits given to data centre `dataCenterId`. */
export const dataCentreLayout = (dataCenterId: number): SnowflakeLayout =>
  new SnowflakeLayout(
    DEFAULT_SNOWFLAKE_EPOCH,
    { timestampBits: 41, dataCenterBits: 3, workerBits: 7, sequenceBits: 12 },
    dataCenterId,
  );

/** Settings of a worker started on in-memory state stores (worker IDs 0..1023, no disk). */
export const TEST_SNOWFLAKE_SETTINGS: SnowflakeSettings = {
  epoch: DEFAULT_SNOWFLAKE_EPOCH,
  layout: LEAF_LAYOUT,
  dataCenterId: 0,
  stateDir: 'unused: in-memory state stores',
  sequenceRandomBound: 0,
  clockBackwardsToleranceMs: 5,
  heartbeatIntervalMs: 1_000,
  leaseMs: 5_000,
  localRunwayMs: 60_000,
  startupMaxWaitMs: 10_000,
};

/** A lease that never stands in the way. */
const openLease: SnowflakeLeaseGate = {
  issuableUntil: Number.MAX_SAFE_INTEGER,
  maybeRenew: () => undefined,
  cover: () => Promise.resolve(),
  onStop: () => undefined,
};

/**
 * A generator of `layout` for `workerId` on `clock` under {@link openLease}, issuing from the
 * clock's millisecond on; each millisecond's sequence starts below `randomBound` (0: at 0).
 */
export function openGenerator(
  layout: SnowflakeLayout,
  clock: Clock,
  workerId: number,
  randomBound = 0,
): SnowflakeGenerator {
  return new SnowflakeGenerator(
    layout,
    workerId,
    clock,
    openLease,
    { sequenceRandomBound: randomBound, clockBackwardsToleranceMs: 5, tickPollMs: 0 },
    clock.now() - 1,
  );
}

/** The 128 bits of a canonical UUID: text order and number order agree. */
export const uuidBits = (uuid: string): bigint => BigInt(`0x${uuid.replace(/-/g, '')}`);
