/**
 * `nestjs-leaf/orm/typeorm`: Leaf IDs on an application's own TypeORM entities —
 * `@LeafIdColumn()`, the `LeafIdSubscriber` that fills it before each insert, and
 * `LeafTypeOrmModule`, the one place to configure it in a Nest application (over
 * `LeafModule` in-process or `LeafClientModule` remote). A separate entry from
 * `nestjs-leaf/storage/typeorm` (Leaf's own tables, framework-free): this one loads `@nestjs/common`.
 */
export {
  LeafIdColumn,
  leafBigintIdTransformer,
  leafStringIdTransformer,
  type LeafIdColumnOptions,
  type LeafIdPropertyType,
} from '../adapters/typeorm/ids/leaf-id-column.decorator';
export {
  LeafIdSubscriber,
  type LeafIdEntityOptions,
  type LeafIdSubscriberOptions,
} from '../adapters/typeorm/ids/leaf-id.subscriber';
export { LeafTypeOrmModule } from '../nest/typeorm/leaf-typeorm.module';
export type { LeafTypeOrmOptions } from '../nest/typeorm/leaf-typeorm.options';
import type { LEAF_TYPEORM_ASYNC_OPTIONS_TYPE } from '../nest/typeorm/leaf-typeorm.module-definition';
/** What `LeafTypeOrmModule.forRootAsync()` takes: `useFactory`/`inject`/`imports`. */
export type LeafTypeOrmModuleAsyncOptions = typeof LEAF_TYPEORM_ASYNC_OPTIONS_TYPE;
