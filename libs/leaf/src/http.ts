/**
 * `nestjs-leaf/http`: IDs at an application's HTTP edge — request IDs from snowflake IDs
 * (nestjs-cls's `idGenerator`, Fastify's `genReqId`), the `ParseLeafIdPipe` for ID
 * parameters, and the ID's OpenAPI schema (`ApiLeafId`, `ApiLeafIdParam`; `@nestjs/swagger`
 * is an optional peer dependency, loaded only when a decorator is applied).
 */
export {
  LeafRequestIdGenerator,
  type LeafRequestIdOptions,
  type SyncSnowflakeSource,
} from './nest/web/leaf-request-id.generator';
export { ParseLeafIdPipe, type ParseLeafIdPipeOptions } from './nest/web/parse-leaf-id.pipe';
export {
  ApiLeafId,
  ApiLeafIdParam,
  LEAF_ID_SCHEMA,
  type ApiLeafIdOptions,
} from './nest/web/leaf-id.openapi';
export { parseLeafId, MAX_LEAF_ID } from './core/leaf-id-text';
