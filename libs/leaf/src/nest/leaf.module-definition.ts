import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LeafModuleOptions } from './leaf-options.interface';

/** Builds `LeafModule.forRoot()` / `forRootAsync()`; `isGlobal` makes the services visible app-wide. */
export const {
  ConfigurableModuleClass: LeafConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: LEAF_MODULE_OPTIONS,
  OPTIONS_TYPE: LEAF_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: LEAF_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LeafModuleOptions>({ moduleName: 'Leaf' })
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
