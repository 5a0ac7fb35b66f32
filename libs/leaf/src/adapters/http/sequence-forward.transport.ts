import { leafErrorFromBody } from '../../core/errors/leaf-error-from-body';
import type { PeerSigner } from '../../core/http/peer-signature';
import type {
  ForwardItem,
  ForwardResult,
  SequenceForwardTransport,
} from '../../core/sequence/forward-batcher';
import { NodeHttpTransport, type TransportTls } from './node-http.transport';

/**
 * The route an issuer serves forwarded batches on (the application mounts it; see
 * `SequenceService.issueForwarded`): `GET {advertise}/api/sequence/internal/ranges?keys=a,b&counts=1,5`.
 */
export const SEQUENCE_FORWARD_PATH = '/api/sequence/internal/ranges';

/**
 * The route that names the instance answering and the groups it issues for now (the
 * application mounts it; see `SequenceService.instance`):
 * `GET {advertise}/api/sequence/internal/instance` → `{"run":"…","serving":[0,2]}`.
 */
export const SEQUENCE_PROBE_PATH = '/api/sequence/internal/instance';

/** One item of the route's answer: a range `[start, end)` or the issuer's error body. */
export type SequenceForwardAnswerItem =
  | { readonly start: string; readonly end: string }
  | {
      readonly error: {
        readonly statusCode: number;
        readonly code: string;
        readonly message: string;
      };
    };

const DECIMAL = /^\d{1,19}$/;

/**
 * Forwarded batches over keep-alive HTTP (`node:http`, one pool per issuer): keys are
 * `[A-Za-z0-9_.:-]`, so the batch fits in the query string without escaping. With a
 * `signer` (the cluster secret) every request carries its signature headers; with `tls`, an
 * `https:` issuer is called with this instance's client certificate (mutual TLS).
 */
export class SequenceHttpTransport implements SequenceForwardTransport {
  private readonly http: NodeHttpTransport;

  constructor(
    private readonly timeoutMs: number,
    maxSockets = 64,
    private readonly signer: PeerSigner | null = null,
    tls?: TransportTls,
  ) {
    this.http = new NodeHttpTransport({ maxSockets, ...(tls ? { tls } : {}) });
  }

  async send(address: string, items: readonly ForwardItem[]): Promise<ForwardResult[]> {
    const keys = items.map((item) => item.key).join(',');
    const counts = items.map((item) => item.count).join(',');
    const answer = await this.get(address, SEQUENCE_FORWARD_PATH, `keys=${keys}&counts=${counts}`);
    if (answer.status !== 200) {
      throw new Error(`the issuer answered HTTP ${answer.status}`);
    }
    const { ranges } = JSON.parse(answer.body) as { ranges?: unknown };
    if (!Array.isArray(ranges)) throw new Error('the issuer answered no ranges');
    return ranges.map((raw: SequenceForwardAnswerItem, i): ForwardResult => {
      const key = items[i]?.key ?? '';
      if ('error' in raw) {
        const error = leafErrorFromBody(raw.error.statusCode, JSON.stringify(raw.error), {
          mode: 'sequence',
          key,
        });
        return { error: error ?? new Error(raw.error.message) };
      }
      if (!DECIMAL.test(raw.start) || !DECIMAL.test(raw.end)) {
        throw new Error('the issuer answered a malformed range');
      }
      return { start: BigInt(raw.start), end: BigInt(raw.end) };
    });
  }

  async probe(address: string): Promise<{ run: string; serving: number[] }> {
    const answer = await this.get(address, SEQUENCE_PROBE_PATH, '');
    if (answer.status !== 200) throw new Error(`${address} answered HTTP ${answer.status}`);
    const { run, serving } = JSON.parse(answer.body) as { run?: unknown; serving?: unknown };
    if (typeof run !== 'string') throw new Error(`${address} answered no instance identity`);
    const groups = Array.isArray(serving)
      ? serving.filter((group): group is number => Number.isInteger(group))
      : [];
    return { run, serving: groups };
  }

  close(): void {
    this.http.close();
  }

  /** `GET address path?query`, signed when there is a signer. */
  private get(address: string, path: string, query: string) {
    const url = query === '' ? `${address}${path}` : `${address}${path}?${query}`;
    return this.http.get(url, this.timeoutMs, this.signer?.headers('GET', path, query));
  }
}
