/**
 * The baseline server of the HTTP benchmarks, in a process of its own so the load generator
 * and the server do not share one event loop: a bare Nest + Fastify app, one route per ID
 * path answering a constant of the same length and type as the application's answer
 * (`text/plain; charset=utf-8`, through the same `@Header` decorator, from an `async`
 * handler), with the adapter the application uses (`createFastifyAdapter`: the same Fastify
 * options, keep-alive and request-ID generation) and the same Nest and Fastify packages.
 * What it leaves out is what the application adds per request: its hooks (the `x-request-id`
 * echo, the request-duration histogram), the ID itself, its modules.
 * It runs compiled, from `dist/bench/support/` (http-load.ts, `compileBaseline`), importing the
 * adapter from the application's build; the application itself is the build, started as a
 * deployer starts it (./leaf-server.ts). Prints `READY <port>` when listening; stops on
 * SIGTERM or when its parent goes away (stdin closes), and after an hour in any case.
 * Like the application, it first keeps one `nextTick` entry alive (src/next-tick-shape.ts), so
 * neither process can fall onto V8's slow path for `nextTick` and the ratio is the
 * application's own cost.
 */
import '../../src/next-tick-shape';
import 'reflect-metadata';
import { Controller, Get, Header, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createFastifyAdapter } from '../../src/bootstrap';

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
  const app = await NestFactory.create<NestFastifyApplication>(
    BaselineModule,
    createFastifyAdapter(),
    { logger: false },
  );
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  process.stdout.write(`READY ${address.port}\n`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void app.close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.stdin.on('end', stop).on('error', stop).resume();
  setTimeout(stop, 3_600_000).unref();
}

void main();
