/**
 * The library's segment mode in this process, for the in-process benchmarks: a Nest testing
 * module with `LeafModule` (snowflake off) on the given segment options.
 */
import 'reflect-metadata';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { IdService, LeafModule, SegmentService, type LeafSegmentOptions } from 'nestjs-leaf';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../test/support/test-database';

/** A running segment module: its services and how to close it. */
export interface SegmentModule {
  readonly segments: SegmentService;
  /** The module's `IdService` (what the ORM integrations take their IDs from). */
  readonly ids: IdService;
  close(): Promise<void>;
}

/** Starts `LeafModule` with `segment` (logs off); the caller closes it. */
export async function openSegmentModule(segment: LeafSegmentOptions): Promise<SegmentModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [ScheduleModule.forRoot(), LeafModule.forRoot({ segment, snowflake: false })],
  }).compile();
  moduleRef.useLogger(false);
  const app = await moduleRef.init();
  return {
    segments: app.get(SegmentService),
    ids: app.get(IdService),
    close: () => app.close(),
  };
}

/**
 * Runs `fn` on a throw-away MariaDB database (test/support/test-database.ts) with the schema
 * and one `leaf_alloc` row per entry of `tags` (tag → step, `max_id` 1), and a DataSource
 * on it (`url` overrides the address, e.g. a proxy's); drops everything afterwards.
 */
export async function withBenchDatabase<T>(
  tags: Record<string, number>,
  fn: (db: TestDatabase, dataSource: DataSource) => Promise<T>,
  options: { url?: (url: string) => string } = {},
): Promise<T> {
  const db = await createTestDatabase({ migrate: true });
  try {
    for (const [tag, step] of Object.entries(tags)) {
      await db.query('INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, ?)', [
        tag,
        step,
      ]);
    }
    const url = options.url?.(db.url);
    const dataSource = await db.openDataSource(url === undefined ? {} : { overrides: { url } });
    try {
      return await fn(db, dataSource);
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await db.drop();
  }
}
