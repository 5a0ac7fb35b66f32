import { Prisma } from '@prisma/client/extension';
import type { IdService } from '../../core/id.service';
import { IdBatcher } from '../../core/orm/id-batcher';
import { PrismaIdPlanner, withPrismaIds } from './prisma-id.plan';
import {
  resolvePrismaIdSchema,
  type LeafPrismaIdsOptions,
  type PrismaDataModel,
} from './prisma-id.schema';

/**
 * The data model the generated client hands its runtime (`getPrismaClient(config)` keeps it
 * as `_runtimeDataModel`, on the client and on every `$extends` of it). Prisma has had no
 * public way to read the data model since 6.7 (`Prisma.dmmf` is gone: prisma/orm#27028), so
 * this reads the runtime's own copy, checked for its shape; without it, `relations` must be
 * given.
 */
function runtimeDataModelOf(client: unknown): PrismaDataModel | undefined {
  const model = (client as { _runtimeDataModel?: { models?: unknown } } | null)?._runtimeDataModel;
  const models = model?.models;
  const shaped =
    typeof models === 'object' &&
    models !== null &&
    Object.values(models).every((entry) => Array.isArray((entry as { fields?: unknown }).fields));
  return shaped ? (model as PrismaDataModel) : undefined;
}

/**
 * A Prisma client extension that gives the configured models' rows their Leaf IDs, taken from
 * an `IdService` — `LeafModule`'s in-process or `LeafClientModule`'s remote one — before Prisma
 * writes them: on `create`, `createMany`, `createManyAndReturn`, `upsert` (the create branch)
 * and the nested creates of those and of `update` (relation `create`, `createMany`,
 * `connectOrCreate`, and an update's nested `upsert`), at any depth, inside `$transaction`s
 * too. A `BigInt` field gets a `bigint`, a `String` field a decimal string; an ID the caller
 * set is kept. An operation takes one call per mode and key for all its rows (`getIds`,
 * chunks of `maxBatchSize`; `get` for a single row), never one per row. When the source fails
 * (unknown tag, mode off, not ready, Leaf servers unreachable) the operation rejects with its
 * `LeafError` and nothing is written: never a made-up ID. The caller's args are not modified.
 *
 * ```ts
 * const prisma = new PrismaClient({ adapter }).$extends(
 *   leafPrismaIds(ids, { models: { Order: {}, OrderLine: { key: 'order-lines' } } }),
 * );
 * ```
 *
 * Options are checked against the client's data model when it is extended.
 * @throws {LeafConfigurationError} from `$extends` (see `resolvePrismaIdSchema`).
 */
export function leafPrismaIds(ids: IdService, options: LeafPrismaIdsOptions) {
  return Prisma.defineExtension((client) => {
    const schema = resolvePrismaIdSchema(options, runtimeDataModelOf(client));
    const planner = new PrismaIdPlanner(schema);
    const batcher = new IdBatcher(ids, schema.maxBatchSize);
    return client.$extends({
      name: 'nestjs-leaf',
      query: {
        $allModels: {
          async $allOperations({ model, operation, args, query }) {
            const holes = planner.plan(model, operation, args);
            if (holes.length === 0) return query(args);
            // Asked for in one synchronous loop: the batcher makes one call per mode and key.
            const taken = await Promise.all(
              holes.map((hole) => batcher.next(hole.target.mode, hole.target.key)),
            );
            return query(withPrismaIds(args, holes, taken));
          },
        },
      },
    });
  });
}
