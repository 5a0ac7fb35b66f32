/**
 * The fixture application: a user's Nest 11 app on the packed `nestjs-leaf`, on Express or
 * Fastify (CONSUMER_PLATFORM), on SQLite or MySQL (CONSUMER_DB_URL), with snowflake mode on
 * ZooKeeper when CONSUMER_ZK is set. Prints `LISTENING <port>` once it serves.
 */
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';

async function main(): Promise<void> {
  const adapter =
    process.env.CONSUMER_PLATFORM === 'fastify' ? new FastifyAdapter() : new ExpressAdapter();
  const app = await NestFactory.create(AppModule, adapter, {
    logger: ['warn', 'error'],
    abortOnError: false,
  });
  app.enableShutdownHooks();
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  // Where the package came from: the spec checks it is the extracted tarball.
  console.log(`NESTJS_LEAF ${require.resolve('nestjs-leaf')}`);
  console.log(`LISTENING ${port}`);
}

main().catch((error: unknown) => {
  console.error(
    `consumer failed to start: ${error instanceof Error ? error.stack : String(error)}`,
  );
  process.exit(1);
});
