import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, HttpAdapterHost } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { LeafExceptionFilter, LeafMetricsCollector, LeafModule } from 'nestjs-leaf';
import {
  GaplessHealthIndicator,
  SegmentHealthIndicator,
  SequenceHealthIndicator,
  SnowflakeHealthIndicator,
} from 'nestjs-leaf/health';
import { AdminController } from './admin/admin.controller';
import { AdminFormatsController } from './admin/admin-formats.controller';
import { AdminWorkersController } from './admin/admin-workers.controller';
import { AdminIdsController } from './admin/admin-ids.controller';
import { AdminGaplessController } from './admin/admin-gapless.controller';
import { AdminTokenGuard, MonitorPagesGuard } from './admin/admin.guard';
import { ADMIN_ACCESS, type AdminAccess } from './admin/admin-token';
import { CLIENT_ACCESS, ClientAccess } from './clients/client-access';
import { installClientTokenCheck } from './clients/client-token.hook';
import type { AppConfig } from './config/app-config';
import { toLeafOptions } from './config/leaf-options.mapping';
import { APP_DATA_SOURCES, DatabaseModule, type AppDataSources } from './database/database.module';
import { GaplessController } from './gapless/gapless.controller';
import { HealthController } from './health/health.controller';
import { INTERNAL_LISTENER_CONFIG, InternalListener } from './internal-listener';
import { BusinessNumberController } from './id/business-number.controller';
import { LEAF_MODES } from './id/count';
import { DecodeController } from './id/decode.controller';
import { SegmentController } from './id/segment.controller';
import { SequenceController } from './id/sequence.controller';
import { SnowflakeController } from './id/snowflake.controller';
import { loggingModule, type LogDestination } from './logging/logging.module';
import { MetricsController } from './monitor/metrics.controller';
import { createMetricsRegistry, METRICS_REGISTRY } from './monitor/metrics.registry';
import { MonitorController } from './monitor/monitor.controller';

/**
 * The deployable application. Built from an explicit {@link AppConfig} (not from globals),
 * so tests can run several instances in one process. `logs` is where the JSON log lines go
 * (`main.ts` owns it, to flush it before the process ends).
 */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logs?: LogDestination): DynamicModule {
    // Segment and sequence mode take their ranges from the database: open it with either on;
    // the region registry's database with a region (snowflake mode alone included).
    const allocation = config.segment.enabled || config.sequence.enabled;
    const region = config.snowflake.region;
    const database =
      allocation || region ? [DatabaseModule.forRoot(config.segment, region, allocation)] : [];
    return {
      module: AppModule,
      imports: [
        loggingModule(config, logs),
        ScheduleModule.forRoot(),
        TerminusModule,
        LeafModule.forRootAsync({
          // Each mode registers its providers only when it is on.
          modes: LEAF_MODES.filter((mode) => config[mode].enabled),
          // LEAF_GAPLESS: GaplessNumberService on segment mode's database.
          gapless: config.gapless.enabled,
          imports: database,
          inject: database.length > 0 ? [APP_DATA_SOURCES] : [],
          // Without a database nothing is injected: toLeafOptions takes its absence as null.
          useFactory: (databases?: AppDataSources) => toLeafOptions(config, databases),
        }),
      ],
      controllers: [
        SegmentController,
        SnowflakeController,
        SequenceController,
        DecodeController,
        BusinessNumberController,
        GaplessController,
        // LEAF_MONITOR_PAGES=off: /cache and /db are not served at all.
        ...(config.monitorPages === 'off' ? [] : [MonitorController]),
        // Without LEAF_ADMIN_TOKEN the admin routes do not exist.
        ...(config.adminToken !== null
          ? [
              AdminController,
              AdminWorkersController,
              AdminFormatsController,
              AdminIdsController,
              AdminGaplessController,
            ]
          : []),
        MetricsController,
        HealthController,
      ],
      providers: [
        { provide: APP_FILTER, useClass: LeafExceptionFilter },
        {
          provide: METRICS_REGISTRY,
          useFactory: createMetricsRegistry,
          inject: [LeafMetricsCollector],
        },
        {
          provide: ADMIN_ACCESS,
          useValue: {
            token: config.adminToken,
            monitorPages: config.monitorPages,
          } satisfies AdminAccess,
        },
        AdminTokenGuard,
        MonitorPagesGuard,
        // LEAF_CLIENT_TOKENS: the client routes need a token. Without it no check runs at all:
        // the routes are open and cost exactly what they did.
        ...(config.clientTokens !== null
          ? [
              {
                provide: CLIENT_ACCESS,
                // Providers are built before `app.init()` registers the routes, so the check
                // is on every client route of whoever hosts this module on Fastify.
                useFactory: (host: HttpAdapterHost) => {
                  const access = new ClientAccess(config.clientTokens ?? []);
                  installClientTokenCheck(host.httpAdapter.getInstance(), access);
                  return access;
                },
                inject: [HttpAdapterHost],
              },
            ]
          : []),
        SegmentHealthIndicator,
        SnowflakeHealthIndicator,
        SequenceHealthIndicator,
        GaplessHealthIndicator,
        // LEAF_INTERNAL_PORT: the internal routes on a mutual-TLS listener of their own.
        ...(config.internal !== null
          ? [{ provide: INTERNAL_LISTENER_CONFIG, useValue: config.internal }, InternalListener]
          : []),
      ],
    };
  }
}
