import type { RemoteCaller, RemoteRequest } from './remote-caller';

/**
 * The remote client's requests through its servers, counted in flight until they settle so
 * that the client's `close()` can wait for them.
 */
export class RemoteCalls {
  private readonly requests = new Set<Promise<unknown>>();

  /**
   * @param ready resolves once a server is known; rejects with `ShuttingDownError` once the
   *   client is closed.
   */
  constructor(
    private readonly caller: RemoteCaller,
    readonly requestTimeoutMs: number,
    private readonly ready: () => Promise<void>,
  ) {}

  /** Resolves once every request tracked so far has settled. Never rejects. */
  async settled(): Promise<void> {
    await Promise.all([...this.requests]);
  }

  /**
   * Sends `request` (by default with the client's request timeout) once a server is known,
   * counted in flight until it settles.
   * @throws {ShuttingDownError} once the client is closed; the request's own errors.
   */
  async send<T>(
    request: Omit<RemoteRequest<T>, 'timeoutMs'> & { readonly timeoutMs?: number },
  ): Promise<T> {
    await this.ready();
    const answer = this.caller.request({ timeoutMs: this.requestTimeoutMs, ...request });
    const settled = answer.catch(() => undefined);
    this.requests.add(settled);
    void settled.finally(() => this.requests.delete(settled));
    return answer;
  }
}
