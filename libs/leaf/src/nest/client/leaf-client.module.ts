import { Module, type BeforeApplicationShutdown } from '@nestjs/common';
import { LeafClient } from '../../client/leaf-client';
import type { LeafClientOptions } from '../../client/leaf-client.options';
import { IdService } from '../../core/id.service';
import {
  LEAF_CLIENT_MODULE_OPTIONS,
  LeafClientConfigurableModuleClass,
} from './leaf-client.module-definition';

/**
 * The remote Leaf client as a Nest module: provides {@link IdService} — the same token, methods
 * and types as `LeafModule`'s — served by a {@link LeafClient} from Leaf servers, and the
 * client itself (for `getSync` and per-key generators). An application moves between
 * in-process and remote Leaf by changing this one import (docs/client.md):
 *
 * ```ts
 * LeafClientModule.forRoot({ servers: ['http://leaf-1:8080', 'http://leaf-2:8080'] })
 * // or
 * LeafClientModule.forRootAsync({
 *   inject: [ConfigService],
 *   useFactory: (config: ConfigService) => ({ servers: config.get('LEAF_SERVERS').split(',') }),
 * })
 * ```
 *
 * The client is closed at shutdown. No database, ZooKeeper or `ScheduleModule` is needed.
 */
@Module({
  providers: [
    {
      provide: LeafClient,
      useFactory: (options: LeafClientOptions) => new LeafClient(options),
      inject: [LEAF_CLIENT_MODULE_OPTIONS],
    },
    { provide: IdService, useExisting: LeafClient },
  ],
  exports: [IdService, LeafClient],
})
export class LeafClientModule
  extends LeafClientConfigurableModuleClass
  implements BeforeApplicationShutdown
{
  constructor(private readonly client: LeafClient) {
    super();
  }

  /** Closes the client (requests in flight finish first). */
  async beforeApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
