/** Requests in flight, so that the client's `close()` can wait for them. */
export class InFlight {
  private readonly requests = new Set<Promise<unknown>>();

  /** Resolves once every request tracked so far has settled. Never rejects. */
  async settled(): Promise<void> {
    await Promise.all([...this.requests]);
  }

  /** `request`, counted in flight until it settles. */
  track<T>(request: Promise<T>): Promise<T> {
    const settled = request.catch(() => undefined);
    this.requests.add(settled);
    void settled.finally(() => this.requests.delete(settled));
    return request;
  }
}
