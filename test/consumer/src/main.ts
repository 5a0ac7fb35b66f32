/**
 * The fixture application: a user's Nest 11 app on the packed `nestjs-leaf`, on Express or
 * Fastify (CONSUMER_PLATFORM), on SQLite or MySQL (CONSUMER_DB_URL), with snowflake mode on
 * ZooKeeper when CONSUMER_ZK is set; or on remote Leaf servers (CONSUMER_LEAF_SERVERS, a
 * comma-separated list) through LeafClientModule. Prints `LISTENING <port>` once it serves.
 */
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';

async function main(): Promise<void> {
  const adapter =
    process.env.CONSUMER_PLATFORM === 'fastify' ? new FastifyAdapter() : new ExpressAdapter();
  // CONSUMER_LEAF_SERVERS: the remote variant (LeafClientModule); loaded lazily, so that the
  // in-process module's imports (TypeORM, drivers) are not loaded by it.
  const root = process.env.CONSUMER_LEAF_SERVERS
    ? (await import('./remote-app.module')).RemoteAppModule
    : (await import('./app.module')).AppModule;
  const app = await NestFactory.create(root, adapter, {
    logger: ['warn', 'error'],
    abortOnError: false,
  });
  app.enableShutdownHooks();
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  // Where the package came from: the spec checks it is the extracted tarball.
  console.log(`NESTJS_LEAF ${require.resolve('nestjs-leaf')}`);
  const drivers = Object.keys(require.cache).filter((file) =>
    /[\\/]node_modules[\\/](typeorm|mysql2|better-sqlite3|zookeeper)[\\/]/.test(file),
  );
  console.log(`DRIVERS_LOADED ${drivers.length}`);
  console.log(`LISTENING ${port}`);
}

main().catch((error: unknown) => {
  console.error(
    `consumer failed to start: ${error instanceof Error ? error.stack : String(error)}`,
  );
  process.exit(1);
});
