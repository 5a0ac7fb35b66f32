import {
  Controller,
  Inject,
  Injectable,
  UseGuards,
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { UnauthorizedError } from 'nestjs-leaf/errors';
import { ApiLeafErrors } from '../openapi';
import { ADMIN_ACCESS, bearerToken, tokenMatches, type AdminAccess } from './admin-token';

/** The admin routes: `Authorization: Bearer <LEAF_ADMIN_TOKEN>`, else 401 `LEAF_UNAUTHORIZED`. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(@Inject(ADMIN_ACCESS) protected readonly access: AdminAccess) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>();
    const given = bearerToken(request.headers.authorization as string | undefined);
    if (this.access.token === null || !tokenMatches(given, this.access.token)) {
      throw new UnauthorizedError(
        given === null
          ? 'this route needs an Authorization: Bearer <LEAF_ADMIN_TOKEN> header'
          : 'the bearer token is not valid',
      );
    }
    return true;
  }
}

/** `/cache` and `/db`: open, or behind the admin token with `LEAF_MONITOR_PAGES=token`. */
@Injectable()
export class MonitorPagesGuard extends AdminTokenGuard {
  override canActivate(context: ExecutionContext): boolean {
    return this.access.monitorPages === 'open' || super.canActivate(context);
  }
}

/**
 * An admin controller at `path`: behind {@link AdminTokenGuard}, documented under the `admin`
 * tag and bearer scheme with its error answers `statuses`.
 */
export function AdminRoutes(path: string, ...statuses: number[]): ClassDecorator {
  return applyDecorators(
    UseGuards(AdminTokenGuard),
    Controller(path),
    ApiLeafErrors(...statuses),
    ApiBearerAuth('admin'),
    ApiTags('admin'),
  );
}
