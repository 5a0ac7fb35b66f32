import type { Provider } from '@nestjs/common';
import { regionRegistry, workerIdSource } from '../coordination.assembly';
import {
  LEAF_REGION_REGISTRY,
  LEAF_RESOLVED_OPTIONS,
  LEAF_WORKER_ID_SOURCE,
  LEAF_ZK_CLIENT_FACTORY,
} from '../leaf.constants';
import { SnowflakeHeartbeatJob } from './snowflake-heartbeat.job';
import { SnowflakeService } from './snowflake.service';

/** Snowflake mode's providers, registered by `LeafModule` only when the mode is on. */
export const SNOWFLAKE_PROVIDERS: Provider[] = [
  {
    provide: LEAF_WORKER_ID_SOURCE,
    useFactory: workerIdSource,
    inject: [LEAF_RESOLVED_OPTIONS, LEAF_ZK_CLIENT_FACTORY],
  },
  { provide: LEAF_REGION_REGISTRY, useFactory: regionRegistry, inject: [LEAF_RESOLVED_OPTIONS] },
  SnowflakeService,
  SnowflakeHeartbeatJob,
];

/** What snowflake mode's module exports. */
export const SNOWFLAKE_EXPORTS = [SnowflakeService];
