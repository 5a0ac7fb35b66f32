import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { LeafExceptionFilter, LeafModule } from 'nestjs-leaf';
import {
  LEAF_MIGRATIONS,
  LEAF_MIGRATIONS_TABLE_NAME,
  LeafAllocEntity,
} from 'nestjs-leaf/storage/typeorm';
import { DataSource } from 'typeorm';
import { HealthModule } from './health.module';
import { DecodeController } from './decode.controller';
import { IdController } from './id.controller';
import { NoteEntity } from './note.entity';
import { SeedDemoTag1796304233816 } from './seed-demo-tag.migration';

/**
 * The user's own DataSource: their entity, synchronize on, Leaf's migrations then their own
 * (a first tag) in Leaf's migrations table.
 */
function typeOrmOptions(url: string): TypeOrmModuleOptions {
  const common = {
    entities: [NoteEntity, LeafAllocEntity],
    synchronize: true, // the user's choice; leaf_alloc opts out of it
    migrations: [...LEAF_MIGRATIONS, SeedDemoTag1796304233816],
    migrationsTableName: LEAF_MIGRATIONS_TABLE_NAME,
    migrationsRun: true,
    logging: false,
  };
  if (url.startsWith('sqlite:')) {
    return { ...common, type: 'better-sqlite3', database: url.slice('sqlite:'.length) };
  }
  return { ...common, type: 'mysql', url, supportBigNumbers: true, bigNumberStrings: true };
}

const zookeeper = process.env.CONSUMER_ZK;

@Module({
  imports: [
    ScheduleModule.forRoot(),
    TypeOrmModule.forRoot(typeOrmOptions(process.env.CONSUMER_DB_URL ?? 'sqlite::memory:')),
    LeafModule.forRootAsync({
      isGlobal: true,
      modes: zookeeper ? ['segment', 'snowflake'] : ['segment'],
      inject: [DataSource],
      useFactory: (dataSource: DataSource) => ({
        name: process.env.CONSUMER_LEAF_NAME ?? 'consumer',
        segment: { dataSource },
        snowflake: zookeeper
          ? {
              zookeeper: { connect: zookeeper, connectTimeoutMs: 5000, sessionTimeoutMs: 6000 },
              advertise: process.env.CONSUMER_ADVERTISE ?? '127.0.0.1:1',
              stateDir: process.env.CONSUMER_STATE_DIR ?? './data',
            }
          : false,
      }),
    }),
    HealthModule,
  ],
  controllers: [IdController, DecodeController],
  providers: [{ provide: APP_FILTER, useClass: LeafExceptionFilter }],
})
export class AppModule {}
