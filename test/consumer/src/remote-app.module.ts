import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { LeafClientModule, LeafExceptionFilter } from 'nestjs-leaf/client/nest';
import { IdController } from './id.controller';

/**
 * The same application on remote Leaf: the one change is the module import, LeafModule (and
 * its DataSource and ScheduleModule) replaced by LeafClientModule; IdController is unchanged.
 */
@Module({
  imports: [
    LeafClientModule.forRoot({
      isGlobal: true,
      servers: (process.env.CONSUMER_LEAF_SERVERS ?? '').split(','),
      segment: { minRangeSize: 100 },
    }),
  ],
  controllers: [IdController],
  providers: [{ provide: APP_FILTER, useClass: LeafExceptionFilter }],
})
export class RemoteAppModule {}
