import type { LeafClientOptions } from '../../client/leaf-client.options';
import { leafModuleBuilder } from '../leaf.module-definition';

export const {
  ConfigurableModuleClass: LeafClientConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: LEAF_CLIENT_MODULE_OPTIONS,
  OPTIONS_TYPE: LEAF_CLIENT_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: LEAF_CLIENT_ASYNC_OPTIONS_TYPE,
} = leafModuleBuilder<LeafClientOptions>('LeafClient');
