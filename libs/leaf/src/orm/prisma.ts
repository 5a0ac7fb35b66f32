/**
 * `nestjs-leaf/orm/prisma`: Leaf IDs on an application's own Prisma models — `leafPrismaIds`,
 * a Prisma 7 client extension over an `IdService` (`LeafModule` in-process or
 * `LeafClientModule` remote) that fills the configured models' ID fields on every create,
 * nested ones included. Loads `@prisma/client` (its `extension` entry, not the application's
 * generated client) and no framework.
 */
export { leafPrismaIds } from '../adapters/prisma/leaf-prisma-ids.extension';
export type {
  LeafPrismaIdsOptions,
  LeafPrismaModelOptions,
} from '../adapters/prisma/prisma-id.schema';
