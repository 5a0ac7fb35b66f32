import { Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { SequencePeerAuth } from './sequence-peer-auth';

/** The parts of an HTTP request (Fastify's or Express's) the guard reads. */
interface PeerHttpRequest {
  readonly method: string;
  readonly url: string;
  /** Express: `url` is relative to the router's mount point. */
  readonly originalUrl?: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * Put on the internal routes of sequence mode (`SEQUENCE_FORWARD_PATH`, `SEQUENCE_PROBE_PATH`):
 * with `sequence.clusterSecret` set, a request without a valid peer signature is refused with
 * `UnauthorizedError` (401 `LEAF_UNAUTHORIZED` through `LeafExceptionFilter`) before the route
 * runs. With sequence mode off it lets everything through (the route itself refuses then).
 */
@Injectable()
export class SequencePeerGuard implements CanActivate {
  constructor(@Optional() private readonly auth?: SequencePeerAuth) {}

  /** @throws {UnauthorizedError} for a request that is not a valid peer's. */
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<PeerHttpRequest>();
    this.auth?.check({
      method: request.method,
      url: request.originalUrl ?? request.url,
      headers: request.headers,
    });
    return true;
  }
}
