import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { bearerToken } from '../admin/admin-token';
import { CLIENT_ACCESS, type ClientAccess } from './client-access';
import { CLIENT_ROUTE, type ClientRouteScope } from './client-route.decorator';

interface RequestParts {
  readonly headers: Record<string, string | string[] | undefined>;
  readonly params?: Record<string, string | undefined>;
  readonly query?: Record<string, unknown>;
}

/** The IDs a request costs: 1, its `count` (when well-formed; the route refuses it otherwise), or 0. */
function costOf(scope: ClientRouteScope, request: RequestParts): number {
  if (scope.cost === 'none') return 0;
  if (scope.cost === 'one') return 1;
  const raw = request.query?.count;
  // A malformed count costs nothing here: the route answers 400 before it allocates.
  return typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
}

/**
 * The client-token check (docs/security.md, "Callers"), registered as a global guard only when
 * `LEAF_CLIENT_TOKENS` (or its file) is set. Every route marked `@ClientRoute` needs
 * `Authorization: Bearer <token>` of a client allowed its mode and tag, and within its quota;
 * other routes (health, metrics, admin, the peers' internal routes) are not its concern. It
 * runs before the handler, so a refused request allocates nothing.
 */
@Injectable()
export class ClientTokenGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(CLIENT_ACCESS) private readonly access: ClientAccess,
  ) {}

  /**
   * @throws {UnauthorizedError} 401, `ForbiddenError` 403, `RateLimitedError` 429
   *   (see `ClientAccess.admit`).
   */
  canActivate(context: ExecutionContext): boolean {
    const scope = this.reflector.get<ClientRouteScope | undefined>(
      CLIENT_ROUTE,
      context.getHandler(),
    );
    if (scope === undefined) return true;
    const request = context.switchToHttp().getRequest<RequestParts>();
    const token = bearerToken(request.headers.authorization);
    const tag = scope.tagParam === null ? null : (request.params?.[scope.tagParam] ?? null);
    this.access.admit(token, scope.mode, tag, costOf(scope, request));
    return true;
  }
}
