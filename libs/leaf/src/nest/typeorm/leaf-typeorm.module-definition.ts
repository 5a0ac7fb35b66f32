import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LeafTypeOrmOptions } from './leaf-typeorm.options';

/** Builds `LeafTypeOrmModule.forRoot()` / `forRootAsync()`. */
export const {
  ConfigurableModuleClass: LeafTypeOrmConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: LEAF_TYPEORM_MODULE_OPTIONS,
  ASYNC_OPTIONS_TYPE: LEAF_TYPEORM_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LeafTypeOrmOptions>({ moduleName: 'LeafTypeOrm' })
  .setClassMethodName('forRoot')
  .build();
