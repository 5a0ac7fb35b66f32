/** One HTTP answer, as the client needs it. */
export interface TransportAnswer {
  readonly status: number;
  readonly body: string;
  /** The `Retry-After` header (seconds), when present. */
  readonly retryAfter?: string;
}

/**
 * How the client talks to a Leaf server: one `GET` (or, for gapless series, `POST`) with a
 * deadline. The default is
 * `NodeHttpTransport` (`node:http` with keep-alive pools); tests pass a fake.
 */
export interface LeafTransport {
  /**
   * `GET url`; rejects when no complete answer arrived within `timeoutMs` (the request is
   * then aborted) or the connection failed. Any HTTP status resolves. `headers` are sent
   * with the request (a credential: `authorization`, a peer signature).
   */
  get(
    url: string,
    timeoutMs: number,
    headers?: Readonly<Record<string, string>>,
  ): Promise<TransportAnswer>;
  /**
   * `POST url` with the JSON `body`, as {@link get}. Optional: only gapless series' calls
   * (`LeafClient.gapless`) need it; without it they fail with `LeafConfigurationError`.
   */
  post?(
    url: string,
    body: string,
    timeoutMs: number,
    headers?: Readonly<Record<string, string>>,
  ): Promise<TransportAnswer>;
  /** Closes pooled connections. */
  close(): void;
}
