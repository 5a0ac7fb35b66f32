import type { Provider } from '@nestjs/common';
import { SnowflakeHeartbeatJob } from './snowflake-heartbeat.job';
import { SnowflakeService } from './snowflake.service';

/** Snowflake mode's providers, registered by `LeafModule` only when the mode is on. */
export const SNOWFLAKE_PROVIDERS: Provider[] = [SnowflakeService, SnowflakeHeartbeatJob];

/** What snowflake mode's module exports. */
export const SNOWFLAKE_EXPORTS = [SnowflakeService];
