/**
 * `nestjs-leaf/orm/sync`: synchronous ID defaults for ORMs that call a plain function per row —
 * Drizzle's `$defaultFn(leafIdDefault(segments, 'orders'))`, MikroORM's
 * `@PrimaryKey({ type: 'bigint', onCreate: leafIdDefault(snowflake, 'any') })` — on the warm
 * in-process path, throwing a typed `LeafError` when no ID is at hand. Loads no ORM and no
 * framework. (TypeORM: `nestjs-leaf/orm/typeorm`.)
 */
export {
  leafIdDefault,
  leafIdStringDefault,
  type LeafSyncIdHandle,
  type LeafSyncIdProvider,
  type LeafSyncIdSource,
} from '../core/orm/leaf-id-default';
