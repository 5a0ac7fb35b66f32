/**
 * `nestjs-leaf/gapless`: gapless numbers (docs/gapless.md) — `GaplessNumberService`, which
 * `LeafModule` provides with its `gapless` option: series whose every number is reserved,
 * confirmed or voided, never missing nor twice; service mode (reserve → confirm | void,
 * idempotent by key, group-committed) and in-transaction mode (`next` inside the caller's
 * transaction, with the executors of Prisma, Drizzle and MikroORM below; a TypeORM
 * `EntityManager` is one as it is). Its errors are in `nestjs-leaf/errors`.
 */
export { GaplessNumberService } from './nest/gapless/gapless-number.service';
export {
  GAPLESS_DEFAULTS,
  type LeafGaplessOptions,
  type ResolvedGaplessOptions,
} from './nest/gapless/gapless-options';
export {
  GAPLESS_PERIODS,
  type GaplessPeriod,
  type GaplessSeries,
  type NewGaplessSeries,
} from './core/gapless/gapless-series';
export { GAPLESS_EXPIRED_REASON, type GaplessNumber } from './core/gapless/gapless-batch';
export type { GaplessReport } from './core/gapless/gapless-verify';
export {
  gaplessNumberJson,
  gaplessNumberFromJson,
  type GaplessNumberJson,
} from './core/gapless/gapless-number.json';
export type { GaplessReadinessState } from './core/gapless/gapless-readiness';
export {
  GAPLESS_STATES,
  type GaplessSqlExecutor,
  type GaplessState,
} from './core/gapless/gapless-store.port';
export {
  prismaGaplessExecutor,
  type PrismaRawTransaction,
} from './adapters/prisma/gapless-prisma.executor';
export {
  drizzleGaplessExecutor,
  mikroOrmGaplessExecutor,
  type DrizzleSqlTag,
  type DrizzleTransaction,
  type MikroOrmTransactionManager,
} from './adapters/orm/gapless-orm.executors';
export { TypeormGaplessStore } from './adapters/typeorm/typeorm-gapless.store';
