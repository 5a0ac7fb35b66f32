import {
  Controller,
  Get,
  Module,
  Res,
  ServiceUnavailableException,
  type INestApplication,
} from '@nestjs/common';
import { APP_FILTER, HttpAdapterHost, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AllocationError } from '../../core/errors/allocation.error';
import { ForbiddenError } from '../../core/errors/forbidden.error';
import { InvalidArgumentError } from '../../core/errors/invalid-argument.error';
import { RateLimitedError } from '../../core/errors/rate-limited.error';
import { TagNotFoundError } from '../../core/errors/tag-not-found.error';
import { LeafExceptionFilter } from './leaf-exception.filter';

@Controller()
class FailingController {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  @Get('tag')
  tag(): never {
    throw new TagNotFoundError('nope');
  }

  @Get('count')
  count(): never {
    throw new InvalidArgumentError('count must be an integer in 1..1000', 'count');
  }

  @Get('busy')
  busy(): never {
    throw new AllocationError('order', 'the database failed');
  }

  @Get('driver')
  driver(): never {
    const driver = new Error('invalid byte sequence for encoding "UTF8": 0x00');
    throw new AllocationError('order', `Allocation for tag "order" failed: ${driver.message}`, {
      cause: driver,
    });
  }

  @Get('quota')
  quota(): never {
    throw new RateLimitedError('over quota', 1_200);
  }

  @Get('forbidden')
  forbidden(): never {
    throw new ForbiddenError('not this tag');
  }

  @Get('text')
  text(@Res({ passthrough: true }) response: unknown): never {
    this.adapterHost.httpAdapter.setHeader(response, 'content-type', 'text/plain; charset=utf-8');
    throw new TagNotFoundError('late');
  }

  @Get('health')
  health(): never {
    throw new ServiceUnavailableException({
      status: 'error',
      info: {},
      error: { db: { status: 'down' } },
      details: { db: { status: 'down' } },
    });
  }

  @Get('bug')
  bug(): never {
    throw new Error('secret internals');
  }
}

@Module({
  controllers: [FailingController],
  providers: [{ provide: APP_FILTER, useClass: LeafExceptionFilter }],
})
class FailingModule {}

describe.each([
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
])('LeafExceptionFilter on %s', (_name, adapter) => {
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    app = await NestFactory.create(FailingModule, adapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterAll(() => app.close());

  async function get(path: string) {
    const response = await fetch(`${base}${path}`);
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as unknown,
    };
  }

  it('a LeafError: its status and {statusCode, code, message, leafCode}', async () => {
    expect(await get('/tag')).toEqual({
      status: 404,
      type: 'application/json; charset=utf-8',
      retryAfter: null,
      body: {
        statusCode: 404,
        code: 'LEAF_TAG_NOT_FOUND',
        message: 'Tag "nope" does not exist in leaf_alloc',
        leafCode: -2,
      },
    });
    expect(await get('/count')).toMatchObject({
      status: 400,
      body: {
        statusCode: 400,
        code: 'LEAF_INVALID_ARGUMENT',
        message: 'count must be an integer in 1..1000',
      },
    });
  });

  it('never answers the text of a foreign cause (a driver message): the log keeps it', async () => {
    const answer = await get('/driver');
    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({
      statusCode: 503,
      code: 'LEAF_ALLOCATION_FAILED',
      message:
        'Tag "order": the request failed (LEAF_ALLOCATION_FAILED); the cause is in the server log',
    });
  });

  it('a 503 with a retry hint carries Retry-After (whole seconds)', async () => {
    expect(await get('/busy')).toMatchObject({
      status: 503,
      retryAfter: '1',
      body: { statusCode: 503, code: 'LEAF_ALLOCATION_FAILED', message: 'the database failed' },
    });
  });

  it('a 429 carries Retry-After rounded up to whole seconds; a 403 none', async () => {
    expect(await get('/quota')).toMatchObject({
      status: 429,
      retryAfter: '2',
      body: { statusCode: 429, code: 'LEAF_RATE_LIMITED', message: 'over quota' },
    });
    expect(await get('/forbidden')).toMatchObject({
      status: 403,
      retryAfter: null,
      body: { statusCode: 403, code: 'LEAF_FORBIDDEN', message: 'not this tag' },
    });
  });

  it('replaces a content type the handler set before failing', async () => {
    expect(await get('/text')).toMatchObject({
      status: 404,
      type: expect.stringMatching(/^application\/json/),
      body: { code: 'LEAF_TAG_NOT_FOUND' },
    });
  });

  it('passes a terminus report through; other HttpExceptions as LEAF_HTTP_<status>', async () => {
    expect(await get('/health')).toMatchObject({
      status: 503,
      body: { status: 'error', details: { db: { status: 'down' } } },
    });
    expect(await get('/missing')).toMatchObject({
      status: 404,
      body: { statusCode: 404, code: 'LEAF_HTTP_404' },
    });
  });

  it('anything else: 500 LEAF_INTERNAL, without the message or a stack', async () => {
    expect(await get('/bug')).toEqual({
      status: 500,
      type: 'application/json; charset=utf-8',
      retryAfter: null,
      body: { statusCode: 500, code: 'LEAF_INTERNAL', message: 'Internal error' },
    });
  });
});
