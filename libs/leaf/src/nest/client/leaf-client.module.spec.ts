import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { LeafClient } from '../../client/leaf-client';
import type { LeafTransport } from '../../core/http/leaf-transport.port';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { ShuttingDownError } from '../../core/errors/shutting-down.error';
import { IdService } from '../../core/id.service';
import { LeafClientModule } from './leaf-client.module';

/** A server that hands out ranges [n, n + count) and snowflake IDs from a counter. */
function fakeServer(): LeafTransport & {
  urls: string[];
  headers: Array<Readonly<Record<string, string>> | undefined>;
} {
  let next = 1n;
  const urls: string[] = [];
  const headers: Array<Readonly<Record<string, string>> | undefined> = [];
  return {
    urls,
    headers,
    get: async (url, _timeoutMs, sent) => {
      urls.push(url);
      headers.push(sent);
      const count = BigInt(new URL(url).searchParams.get('count')!);
      const start = next;
      next += count;
      if (url.includes('/range/')) {
        return { status: 200, body: JSON.stringify({ start: `${start}`, end: `${next}` }) };
      }
      const ids = Array.from({ length: Number(count) }, (_, i) => `${start + BigInt(i)}`);
      return { status: 200, body: JSON.stringify({ ids }) };
    },
    close: () => undefined,
  };
}

/** A user's service: it injects IdService and never knows who serves it. */
@Injectable()
class OrderService {
  constructor(readonly ids: IdService) {}
}

@Module({
  providers: [{ provide: 'LEAF_SERVERS', useValue: ['http://leaf.test:8080'] }],
  exports: ['LEAF_SERVERS'],
})
class ConfigModule {}

describe('LeafClientModule', () => {
  it('forRoot: provides IdService (the same token as LeafModule) served by a LeafClient', async () => {
    const transport = fakeServer();
    const app = await Test.createTestingModule({
      imports: [LeafClientModule.forRoot({ servers: ['http://leaf.test:8080'], transport })],
      providers: [OrderService],
    })
      .compile()
      .then((ref) => ref.init());
    const ids = app.get(OrderService).ids;
    expect(ids).toBeInstanceOf(LeafClient);
    expect(ids).toBe(app.get(LeafClient));
    expect(await ids.get('segment', 'order')).toBe(1n);
    expect(await ids.getIds('segment', 'order', 3)).toEqual([2n, 3n, 4n]);
    expect(app.get(LeafClient).getSync('order')).toBe(5n);
    expect(transport.urls[0]).toBe('http://leaf.test:8080/api/segment/range/order?count=1000');
    await app.close();
    // Closed with the application.
    expect(() => app.get(LeafClient).getSync('order')).toThrow(ShuttingDownError);
  });

  it('forRootAsync: options from a factory with injected dependencies, isGlobal', async () => {
    const transport = fakeServer();
    const app = await Test.createTestingModule({
      imports: [
        LeafClientModule.forRootAsync({
          isGlobal: true,
          imports: [ConfigModule],
          inject: ['LEAF_SERVERS'],
          useFactory: (servers: string[]) => ({
            servers,
            transport,
            segment: { minRangeSize: 10 },
          }),
        }),
      ],
      providers: [OrderService],
    })
      .compile()
      .then((ref) => ref.init());
    expect(await app.get(OrderService).ids.get('snowflake', 'k')).toBe(1n);
    expect(transport.urls).toEqual(['http://leaf.test:8080/api/snowflake/ids/k?count=1']);
    await app.close();
  });

  it('token: every request carries Authorization: Bearer <token>', async () => {
    const transport = fakeServer();
    const token = 'module-client-token-0123456789';
    const app = await Test.createTestingModule({
      imports: [
        LeafClientModule.forRootAsync({
          useFactory: () => ({ servers: ['http://leaf.test:8080'], transport, token }),
        }),
      ],
    })
      .compile()
      .then((ref) => ref.init());
    await app.get(IdService).get('segment', 'order');
    await app.get(IdService).getIds('snowflake', 'k', 2);
    expect(transport.headers).toEqual([
      { authorization: `Bearer ${token}` },
      { authorization: `Bearer ${token}` },
    ]);
    await app.close();
  });

  it('fails start-up with every invalid option listed', async () => {
    await expect(
      Test.createTestingModule({ imports: [LeafClientModule.forRoot({ servers: [] })] }).compile(),
    ).rejects.toBeInstanceOf(LeafConfigurationError);
  });
});
