import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LeafModuleOptions } from './leaf-options.interface';

/**
 * Builds the `forRoot()` / `forRootAsync()` of a Leaf module (`LeafModule`,
 * `LeafClientModule`); `isGlobal` makes its providers visible app-wide.
 */
export const leafModuleBuilder = <T>(moduleName: string) =>
  new ConfigurableModuleBuilder<T>({ moduleName })
    .setClassMethodName('forRoot')
    .setExtras({ isGlobal: false }, (definition, extras) => ({
      ...definition,
      global: extras.isGlobal,
    }))
    .build();

export const {
  ConfigurableModuleClass: LeafConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: LEAF_MODULE_OPTIONS,
  OPTIONS_TYPE: LEAF_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: LEAF_ASYNC_OPTIONS_TYPE,
} = leafModuleBuilder<LeafModuleOptions>('Leaf');
