/**
 * A server process for the HTTP benchmarks, so the load generator and the server do not
 * share one event loop. `leaf`: the real application on a SQLite file in a temp dir
 * (or `LEAF_DB_URL`). `baseline`: a bare Nest + Fastify app with the same adapter
 * settings and one route answering a constant. Prints `READY <port>` when listening; stops
 * on SIGTERM or when its parent goes away (stdin closes), and after an hour in any case.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Controller, Get, Header, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp, createFastifyAdapter } from '../../src/bootstrap';
import { loadAppConfig } from '../../src/config/app-config';

@Controller('api/segment')
class ConstantController {
  @Get('get/:key')
  @Header('content-type', 'text/plain; charset=utf-8')
  async get(@Param('key') _key: string): Promise<string> {
    return '1234567890';
  }
}

@Controller('api/snowflake')
class ConstantSnowflakeController {
  @Get('get/:key')
  @Header('content-type', 'text/plain; charset=utf-8')
  async get(@Param('key') _key: string): Promise<string> {
    return '2128094966440788019';
  }
}

@Module({ controllers: [ConstantController, ConstantSnowflakeController] })
class BaselineModule {}

async function main(): Promise<void> {
  const mode = process.argv[2];
  let app: NestFastifyApplication;
  let dir: string | null = null;
  if (mode === 'baseline') {
    app = await NestFactory.create<NestFastifyApplication>(BaselineModule, createFastifyAdapter(), {
      logger: false,
    });
  } else {
    dir = mkdtempSync(join(tmpdir(), 'leaf-bench-'));
    const config = loadAppConfig({
      LEAF_DB_URL: process.env.LEAF_DB_URL ?? `sqlite:${join(dir, 'leaf.sqlite')}`,
      LEAF_DB_MIGRATE: 'true',
      LEAF_STATE_DIR: dir,
      LEAF_SNOWFLAKE_ENABLED: process.env.LEAF_SNOWFLAKE_ENABLED ?? 'true',
      LEAF_SEGMENT_WARM_TAGS: 'leaf-segment-test',
      LEAF_MAX_BATCH: '1000',
    });
    app = await createApp(config, { logger: ['error'] });
  }
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  process.stdout.write(`READY ${address.port}\n`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void app.close().finally(() => {
      if (dir !== null) rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  };
  process.on('SIGTERM', stop);
  process.stdin.on('end', stop).on('error', stop).resume();
  setTimeout(stop, 3_600_000).unref();
}

void main();
