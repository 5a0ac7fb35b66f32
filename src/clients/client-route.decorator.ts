import { applyDecorators } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiSecurity } from '@nestjs/swagger';
import { ApiLeafErrors, CLIENT_SECURITY } from '../openapi';
import type { ClientMode } from './client-definitions';

/**
 * Key of the route's Fastify `config` under which {@link ClientRoute} hands its scope to the
 * client-token check (`installClientTokenCheck`), read once when the route is registered.
 */
export const CLIENT_ROUTE_CONFIG = 'leafClientRoute';

/** What a route costs and names, as the client-token check reads it. */
export interface ClientRouteScope {
  /**
   * The mode the route issues from (`gapless`: a gapless series); `null`: none (decoding,
   * which issues nothing by mode).
   */
  readonly mode: ClientMode | null;
  /** The path parameter holding the tag (`key`, `tag`); `null`: the route takes none. */
  readonly tagParam: string | null;
  /** IDs it issues: one, the `count` query parameter, or none (decoding, an empty key). */
  readonly cost: 'one' | 'count' | 'none';
}

/**
 * Marks a route as a client route: with `LEAF_CLIENT_TOKENS` it needs a client token allowed
 * `scope.mode` and the tag, and costs its IDs from the client's quota (`installClientTokenCheck`);
 * documented in OpenAPI with the `client` bearer scheme and its 401/403/429 answers.
 */
export function ClientRoute(scope: ClientRouteScope): MethodDecorator {
  return applyDecorators(
    RouteConfig({ [CLIENT_ROUTE_CONFIG]: scope }),
    ApiSecurity(CLIENT_SECURITY),
    ApiLeafErrors(401, 403, ...(scope.cost === 'none' ? [] : [429])),
  );
}
