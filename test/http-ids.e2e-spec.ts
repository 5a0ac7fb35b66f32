/**
 * nestjs-leaf/http in a real Nest application on Fastify, built as its README section says:
 * snowflake request IDs through Fastify's `genReqId` and nestjs-cls's `idGenerator`, the
 * `ParseLeafIdPipe` on an ID path parameter (400 LEAF_INVALID_ARGUMENT through
 * `LeafExceptionFilter`), and `ApiLeafId` / `ApiLeafIdParam` in the generated OpenAPI document.
 * What happens when snowflake cannot issue a request ID ('throw') is pinned here too.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Controller, Get, Module, Param, Req } from '@nestjs/common';
import { APP_FILTER, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ScheduleModule } from '@nestjs/schedule';
import { ApiOkResponse, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ClsModule, ClsService } from 'nestjs-cls';
import { LeafErrorCode, LeafExceptionFilter, LeafModule, SnowflakeService } from 'nestjs-leaf';
import {
  ApiLeafId,
  ApiLeafIdParam,
  LeafRequestIdGenerator,
  ParseLeafIdPipe,
  type LeafRequestIdOptions,
} from 'nestjs-leaf/http';

class OrderDto {
  @ApiLeafId()
  id!: string;
}

@Controller()
class OrdersController {
  constructor(private readonly cls: ClsService) {}

  @Get('whoami')
  whoami(@Req() request: FastifyRequest) {
    return { cls: this.cls.getId(), fastify: request.id };
  }

  @Get('orders/:id')
  @ApiLeafIdParam('id')
  @ApiOkResponse({ type: OrderDto })
  find(@Param('id', ParseLeafIdPipe) id: bigint): OrderDto {
    return { id: (id + 1n).toString() };
  }

  @Get('raw/:id')
  raw(@Param('id', new ParseLeafIdPipe({ as: 'string' })) id: string) {
    return { id, type: typeof id };
  }
}

describe('nestjs-leaf/http in a Fastify application', () => {
  let stateDir: string;
  const apps: NestFastifyApplication[] = [];
  beforeEach(async () => {
    stateDir = await fs.mkdtemp(path.join(tmpdir(), 'leaf-http-ids-'));
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    await fs.rm(stateDir, { recursive: true, force: true });
  });

  /**
   * The README's bootstrap: one generator for Fastify and nestjs-cls, attached once the app
   * exists (Fastify keeps its own request IDs when `onUnavailable` is 'throw', which
   * `forFastify()` refuses).
   */
  async function start(onUnavailable: LeafRequestIdOptions['onUnavailable'], attach = true) {
    const requestIds = new LeafRequestIdGenerator({ onUnavailable });
    const adapter = new FastifyAdapter(
      onUnavailable === 'throw' ? {} : { genReqId: requestIds.forFastify() },
    );

    @Module({
      imports: [
        ScheduleModule.forRoot(),
        LeafModule.forRoot({ segment: false, snowflake: { workerId: 5, stateDir } }),
        ClsModule.forRoot({
          global: true,
          middleware: { mount: true, generateId: true, idGenerator: requestIds.generate },
        }),
      ],
      controllers: [OrdersController],
      providers: [{ provide: APP_FILTER, useClass: LeafExceptionFilter }],
    })
    class AppModule {}

    const app = await NestFactory.create<NestFastifyApplication>(AppModule, adapter, {
      logger: false,
      abortOnError: false,
    });
    apps.push(app);
    if (attach) requestIds.attach(app.get(SnowflakeService));
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
    return app;
  }

  it('gives every request a snowflake ID (decimal string) that tells when it arrived, in Fastify and nestjs-cls', async () => {
    const app = await start(() => 'not-expected');
    const snowflake = app.get(SnowflakeService);
    const seen: bigint[] = [];
    for (let i = 0; i < 20; i++) {
      const before = Date.now();
      const answer = await app.inject({ method: 'GET', url: '/whoami' });
      const after = Date.now();
      expect(answer.statusCode).toBe(200);
      const { cls, fastify } = answer.json<{ cls: string; fastify: string }>();
      for (const id of [fastify, cls]) {
        expect(id).toMatch(/^[1-9][0-9]*$/);
        const decoded = snowflake.decode(id);
        expect(decoded.workerId).toBe(5);
        expect(decoded.timestamp).toBeGreaterThanOrEqual(before);
        expect(decoded.timestamp).toBeLessThanOrEqual(after);
      }
      // Fastify's ID is generated first (on arrival), nestjs-cls's in its middleware.
      expect(BigInt(cls)).toBeGreaterThan(BigInt(fastify));
      seen.push(BigInt(fastify), BigInt(cls));
    }
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('onUnavailable "throw": nestjs-cls refuses the request with 503 LEAF_SNOWFLAKE_NOT_READY, never a made-up ID', async () => {
    const app = await start('throw', false);
    const answer = await app.inject({ method: 'GET', url: '/whoami' });
    expect(answer.statusCode).toBe(503);
    expect(answer.json()).toMatchObject({ code: LeafErrorCode.SNOWFLAKE_NOT_READY });
    // Attached (as the bootstrap does right after create), the same application serves.
    await apps.pop()!.close();
    const attached = await start('throw');
    expect((await attached.inject({ method: 'GET', url: '/whoami' })).statusCode).toBe(200);
  });

  it('onUnavailable as a function: the request proceeds with the ID it chose, told the typed error', async () => {
    const errors: string[] = [];
    const app = await start((error) => {
      errors.push(error.code);
      return `u-${errors.length}`;
    }, false);
    const answer = await app.inject({ method: 'GET', url: '/whoami' });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ fastify: 'u-1', cls: 'u-2' });
    expect(errors).toEqual([LeafErrorCode.SNOWFLAKE_NOT_READY, LeafErrorCode.SNOWFLAKE_NOT_READY]);
  });

  it('ParseLeafIdPipe: a valid ID reaches the handler as a bigint (or the string), anything else is 400 LEAF_INVALID_ARGUMENT', async () => {
    const app = await start('throw');
    const big = await app.inject({ method: 'GET', url: '/orders/9223372036854775806' });
    expect(big.statusCode).toBe(200);
    expect(big.json()).toEqual({ id: '9223372036854775807' });
    const raw = await app.inject({ method: 'GET', url: '/raw/9007199254740993' });
    expect(raw.json()).toEqual({ id: '9007199254740993', type: 'string' });
    for (const bad of ['9223372036854775808', '0', '007', '-1', '%2B1', '1e3', 'abc']) {
      const answer = await app.inject({ method: 'GET', url: `/orders/${bad}` });
      expect(answer.statusCode).toBe(400);
      expect(answer.json()).toMatchObject({
        statusCode: 400,
        code: LeafErrorCode.INVALID_ARGUMENT,
      });
    }
  });

  it('ApiLeafId / ApiLeafIdParam: the OpenAPI document has the ID as a decimal string', async () => {
    const app = await start('throw');
    const document = SwaggerModule.createDocument(
      app,
      new DocumentBuilder().setTitle('t').setVersion('1').build(),
    );
    const idSchema = {
      type: 'string',
      pattern: '^[1-9][0-9]{0,18}$',
      maxLength: 19,
      description: expect.stringContaining('decimal'),
      example: '2128094966440788019',
    };
    expect(document.components!.schemas!.OrderDto).toMatchObject({
      type: 'object',
      required: ['id'],
      properties: { id: idSchema },
    });
    expect(document.paths['/orders/{id}']!.get!.parameters).toEqual([
      // The handler's `bigint` parameter adds `format: int64` (a string of an int64).
      expect.objectContaining({
        name: 'id',
        in: 'path',
        required: true,
        schema: { ...idSchema, format: 'int64' },
      }),
    ]);
  });
});
