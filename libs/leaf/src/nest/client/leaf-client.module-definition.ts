import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LeafClientOptions } from '../../client/leaf-client.options';

/** Builds `LeafClientModule.forRoot()` / `forRootAsync()`; `isGlobal` makes `IdService` visible app-wide. */
export const {
  ConfigurableModuleClass: LeafClientConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: LEAF_CLIENT_MODULE_OPTIONS,
  OPTIONS_TYPE: LEAF_CLIENT_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: LEAF_CLIENT_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LeafClientOptions>({ moduleName: 'LeafClient' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
