import { Global, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { LeafIdSubscriber } from '../../adapters/typeorm/ids/leaf-id.subscriber';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { IdService, type LeafMode } from '../../core/id.service';
import { LeafTypeOrmModule } from './leaf-typeorm.module';

/** An ID source that is never asked here (the wiring is under test, not the IDs). */
class UnusedIds extends IdService {
  get(_mode: LeafMode, _key: string): Promise<bigint> {
    return Promise.reject(new Error('not used'));
  }
  getIds(_mode: LeafMode, _key: string, _count: number): Promise<bigint[]> {
    return Promise.reject(new Error('not used'));
  }
}

@Global()
@Module({ providers: [{ provide: IdService, useClass: UnusedIds }], exports: [IdService] })
class IdsModule {}

/** A DataSource that is never connected: its `subscribers` list is what is checked. */
function dataSource(): DataSource {
  return new DataSource({ type: 'better-sqlite3', database: ':memory:' });
}

async function app(imports: unknown[]): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [IdsModule, ...(imports as [])],
  }).compile();
  moduleRef.useLogger(false);
  return moduleRef;
}

describe('LeafTypeOrmModule', () => {
  it('puts its own subscriber on each listed DataSource and takes only it off at close', async () => {
    const shared = dataSource();
    const a = await app([LeafTypeOrmModule.forRoot({ dataSources: [shared] })]);
    const b = await app([
      LeafTypeOrmModule.forRootAsync({ useFactory: () => ({ dataSources: [shared] }) }),
    ]);
    await a.init();
    await b.init();
    const [subA, subB] = [a.get(LeafIdSubscriber), b.get(LeafIdSubscriber)];
    expect(subA).not.toBe(subB);
    expect(shared.subscribers).toEqual([subA, subB]);
    await a.close();
    expect(shared.subscribers).toEqual([subB]);
    await b.close();
    expect(shared.subscribers).toEqual([]);
  });

  it('takes the default connection (the DataSource class token) when none is listed', async () => {
    const source = dataSource();
    @Global()
    @Module({ providers: [{ provide: DataSource, useValue: source }], exports: [DataSource] })
    class TypeOrmStandIn {}
    const moduleRef = await app([TypeOrmStandIn, LeafTypeOrmModule.forRoot({})]);
    await moduleRef.init();
    expect(source.subscribers).toEqual([moduleRef.get(LeafIdSubscriber)]);
    await moduleRef.close();
  });

  it('fails at start with LeafConfigurationError when a DataSource is not in the application', async () => {
    const moduleRef = await app([LeafTypeOrmModule.forRoot({ dataSources: ['ordersDataSource'] })]);
    const error: unknown = await moduleRef.init().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeafConfigurationError);
    expect((error as LeafConfigurationError).problems).toEqual([
      'LeafTypeOrmModule found no DataSource under ordersDataSource: import TypeOrmModule.forRoot() or list the DataSources in dataSources',
    ]);
    await moduleRef.close();
  });

  it('refuses invalid subscriber options when the module is built', async () => {
    const error: unknown = await app([LeafTypeOrmModule.forRoot({ maxBatchSize: 0 })]).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LeafConfigurationError);
  });
});
