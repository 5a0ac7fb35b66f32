/**
 * `nestjs-leaf/client/nest`: `LeafClientModule` without the in-process library (no TypeORM,
 * ZooKeeper or database code is loaded), for services that only take IDs from Leaf servers.
 * `IdService` is the same class as `nestjs-leaf`'s, so either import injects it; the
 * exception filter is the same too (the client raises the servers' error classes, so a
 * remote app answers the same status and body).
 */
export { LeafClientModule } from '../nest/client/leaf-client.module';
import type {
  LEAF_CLIENT_ASYNC_OPTIONS_TYPE,
  LEAF_CLIENT_OPTIONS_TYPE,
} from '../nest/client/leaf-client.module-definition';
/** What `LeafClientModule.forRoot()` takes: the client options plus `isGlobal`. */
export type LeafClientModuleForRootOptions = typeof LEAF_CLIENT_OPTIONS_TYPE;
/** What `LeafClientModule.forRootAsync()` takes: `useFactory`/`inject`/`imports` plus `isGlobal`. */
export type LeafClientModuleAsyncOptions = typeof LEAF_CLIENT_ASYNC_OPTIONS_TYPE;
export {
  LeafExceptionFilter,
  leafErrorBody,
  leafErrorStatus,
  type LeafErrorBody,
} from '../nest/http/leaf-exception.filter';
export * from '../client';
