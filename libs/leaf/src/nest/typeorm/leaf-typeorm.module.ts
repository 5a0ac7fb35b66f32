import { Module } from '@nestjs/common';
import { LeafIdSubscriber } from '../../adapters/typeorm/ids/leaf-id.subscriber';
import { IdService } from '../../core/id.service';
import {
  LEAF_TYPEORM_MODULE_OPTIONS,
  LeafTypeOrmConfigurableModuleClass,
} from './leaf-typeorm.module-definition';
import type { LeafTypeOrmOptions } from './leaf-typeorm.options';
import { LeafTypeOrmRegistrar } from './leaf-typeorm.registrar';

/**
 * Leaf IDs on TypeORM entities, configured in one place: registers a {@link LeafIdSubscriber}
 * over the application's `IdService` — `LeafModule`'s (in-process) or `LeafClientModule`'s
 * (remote), whichever the application imports (make it `isGlobal`, or pass it in
 * `forRootAsync({ imports })`) — on its DataSources.
 *
 * ```ts
 * LeafTypeOrmModule.forRoot({
 *   defaults: { mode: 'segment' },            // key: the table name unless given
 *   entities: [{ entity: AuditEvent, mode: 'snowflake' }],
 * })
 * ```
 */
@Module({
  providers: [
    {
      provide: LeafIdSubscriber,
      useFactory: (ids: IdService, options: LeafTypeOrmOptions) =>
        new LeafIdSubscriber(ids, options),
      inject: [IdService, LEAF_TYPEORM_MODULE_OPTIONS],
    },
    LeafTypeOrmRegistrar,
  ],
  exports: [LeafIdSubscriber],
})
export class LeafTypeOrmModule extends LeafTypeOrmConfigurableModuleClass {}
