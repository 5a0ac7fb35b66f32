import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { InMemoryAllocStore } from '../testing/in-memory-alloc.store';
import { SegmentHealthIndicator } from './health/segment.health';
import { SnowflakeHealthIndicator } from './health/snowflake.health';
import { LeafModule } from './leaf.module';
import { SegmentService } from './segment/segment.service';

/** Mistakes a user makes when wiring the module: each fails with a message saying what to do. */
describe('LeafModule misconfiguration', () => {
  const options = () => ({ segment: { store: new InMemoryAllocStore() } });

  async function failureOf(imports: unknown[], providers: unknown[] = []): Promise<Error> {
    try {
      const moduleRef = await Test.createTestingModule({
        imports: imports as never[],
        providers: providers as never[],
      }).compile();
      await moduleRef.close();
    } catch (error) {
      return error as Error;
    }
    throw new Error('expected the module to fail');
  }

  it('without ScheduleModule.forRoot(): a LeafConfigurationError that says to import it once', async () => {
    const error = await failureOf([LeafModule.forRoot(options())]);
    expect(error).toBeInstanceOf(LeafConfigurationError);
    expect(error.message).toContain(
      'import ScheduleModule.forRoot() (@nestjs/schedule) exactly once',
    );
  });

  it('the health indicators in a module that does not see LeafModule: says to import it or use isGlobal', async () => {
    @Module({ imports: [TerminusModule], providers: [SegmentHealthIndicator] })
    class HealthModule {}
    const error = await failureOf([
      ScheduleModule.forRoot(),
      LeafModule.forRoot(options()),
      HealthModule,
    ]);
    expect(error).toBeInstanceOf(LeafConfigurationError);
    expect(error.message).toContain(
      "SegmentHealthIndicator needs LeafModule's services: provide SegmentHealthIndicator in a module that imports LeafModule",
    );
    expect(error.message).toContain('{ isGlobal: true }');
  });

  it('the health indicators without TerminusModule: says to import it', async () => {
    const error = await failureOf(
      [ScheduleModule.forRoot(), LeafModule.forRoot(options())],
      [SnowflakeHealthIndicator],
    );
    expect(error).toBeInstanceOf(LeafConfigurationError);
    expect(error.message).toContain('SnowflakeHealthIndicator needs HealthIndicatorService');
    expect(error.message).toContain('import TerminusModule');
  });

  it('with isGlobal, the indicators work from a module that does not import LeafModule', async () => {
    @Module({
      imports: [TerminusModule],
      providers: [SegmentHealthIndicator, SnowflakeHealthIndicator],
      exports: [SegmentHealthIndicator, SnowflakeHealthIndicator],
    })
    class HealthModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        LeafModule.forRoot({ ...options(), isGlobal: true }),
        HealthModule,
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      expect(app.get(SegmentService).initialized).toBe(true);
      expect(app.get(SegmentHealthIndicator).isHealthy()).toMatchObject({
        segment: { status: 'up' },
      });
      expect(app.get(SnowflakeHealthIndicator).isHealthy()).toEqual({
        snowflake: { status: 'up', enabled: false },
      });
    } finally {
      await app.close();
    }
  });
});
