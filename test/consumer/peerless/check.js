'use strict';
/**
 * Run by test/consumer.e2e-spec.ts in a directory whose node_modules holds the packed
 * nestjs-leaf and ONLY its required peers (no zookeeper, mysql2, better-sqlite3,
 * @nestjs/terminus): boots LeafModule with an in-memory segment store and the embedded
 * snowflake worker, and prints what it got as one JSON line.
 */
require('reflect-metadata');
const path = require('node:path');
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { ScheduleModule } = require('@nestjs/schedule');
const { IdService, LeafModule, SnowflakeService } = require('nestjs-leaf');
const { InMemoryAllocStore } = require('nestjs-leaf/testing');

const OPTIONAL_PEERS = [
  'zookeeper',
  'mysql2',
  'better-sqlite3',
  '@nestjs/terminus',
  '@opentelemetry/api',
  '@nestjs/swagger',
];

/** What `fn` throws (its class name), or what it returns. */
function attempt(fn) {
  try {
    return String(fn());
  } catch (error) {
    return error && error.name;
  }
}

async function main() {
  const store = new InMemoryAllocStore().setTag('order', 1000);
  class AppModule {}
  Module({
    imports: [
      ScheduleModule.forRoot(),
      LeafModule.forRoot({
        segment: { store },
        snowflake: { workerId: 7, stateDir: process.argv[2] },
      }),
    ],
  })(AppModule);
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  const ids = app.get(IdService);
  const segment = await ids.get('segment', 'order');
  const snowflake = await ids.get('snowflake', 'order');
  const workerId = app.get(SnowflakeService).decode(snowflake).workerId;
  // nestjs-leaf/otel and nestjs-leaf/http import without their peers; using the part that
  // needs one says so with a typed error.
  const { LeafTracing } = require('nestjs-leaf/otel');
  const { ApiLeafId, ParseLeafIdPipe } = require('nestjs-leaf/http');
  const tracing = attempt(() => app.get(LeafTracing).enable());
  const pipe = attempt(() => new ParseLeafIdPipe().transform('42', { type: 'param', data: 'id' }));
  const swagger = attempt(() => ApiLeafId());
  await app.close();

  const packageDir = path.dirname(require.resolve('nestjs-leaf/package.json'));
  const loaded = Object.keys(require.cache);
  let health = 'loaded';
  try {
    require('nestjs-leaf/health');
  } catch (error) {
    health = String(error && error.message).split('\n')[0];
  }
  console.log(
    JSON.stringify({
      segment: segment.toString(),
      workerId,
      packageDir,
      loadedOptionalPeers: OPTIONAL_PEERS.filter((peer) =>
        loaded.some((file) =>
          file.includes(`${path.sep}node_modules${path.sep}${peer}${path.sep}`),
        ),
      ),
      resolvableOptionalPeers: OPTIONAL_PEERS.filter((peer) => {
        try {
          require.resolve(peer, { paths: [packageDir] });
          return true;
        } catch {
          return false;
        }
      }),
      health,
      tracing,
      pipe,
      swagger,
    }),
  );
}

main().catch((error) => {
  console.error(error && error.stack ? error.stack : String(error));
  process.exit(1);
});
