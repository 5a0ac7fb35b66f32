import type { InjectionToken } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { LeafIdSubscriberOptions } from '../../adapters/typeorm/ids/leaf-id.subscriber';

/**
 * Options of `LeafTypeOrmModule`: where Leaf IDs go (defaults and per-entity settings, as
 * {@link LeafIdSubscriberOptions}) and on which DataSources.
 */
export interface LeafTypeOrmOptions extends LeafIdSubscriberOptions {
  /**
   * The DataSources to fill IDs on: injection tokens (`getDataSourceToken('name')` of
   * `@nestjs/typeorm` for a named connection) or DataSource instances.
   * @default [DataSource] (the default connection of `TypeOrmModule.forRoot`)
   */
  dataSources?: (InjectionToken | DataSource)[];
}
