import ZooKeeper from 'zookeeper';
import { messageOf } from '../../core/errors/leaf.error';
import { ZkError, type ZkErrorCode } from '../../core/zookeeper/zk-client.port';

/**
 * The part of the `zookeeper` package's handle this adapter uses. Its own declarations are
 * loose (`any[]` results, `client_id` typed as a number although it is a hex string).
 */
export interface NativeHandle {
  init(config: object): unknown;
  close(): unknown;
  on(event: 'connect' | 'connecting' | 'close', listener: (...args: unknown[]) => void): unknown;
  create(path: string, data: Buffer, flags: number): Promise<string>;
  get(path: string, watch: boolean): Promise<[{ version: number }, Buffer | string | null]>;
  set(path: string, data: Buffer, version: number): Promise<{ version: number }>;
  get_children(path: string, watch: boolean): Promise<string[]>;
  delete_(path: string, version: number): Promise<unknown>;
  /** Negotiated session timeout; -1 when the C handle does not exist. */
  readonly timeout: number;
  /** Session id as hex. */
  readonly client_id: string;
}

const NativeZooKeeper = ZooKeeper as unknown as new (config: object) => NativeHandle;

/** A handle for a session to `connect`, to `init` once its listeners are set. */
export function newNativeHandle(connect: string, sessionTimeoutMs: number): NativeHandle {
  return new NativeZooKeeper({
    connect,
    timeout: sessionTimeoutMs,
    // 0 silences the C client's own logging (zoo_set_debug_level(0)): it writes ZOO_ERROR
    // lines straight to stderr, and the binding exposes no way to redirect them
    // (zoo_set_log_stream is not bound). Every condition it would report (connection lost,
    // session expired, cannot connect) is logged by the adapter through its `logger`.
    debug_level: 0,
    host_order_deterministic: false,
  });
}

/** The C client's constants (node flags, return codes). */
export const Z = ZooKeeper.constants;
/** Empty node data. */
export const EMPTY = Buffer.alloc(0);

const CODES = new Map<number, ZkErrorCode>([
  [Z.ZNONODE, 'NO_NODE'],
  [Z.ZNODEEXISTS, 'NODE_EXISTS'],
  [Z.ZBADVERSION, 'BAD_VERSION'],
  // The outcome of these is unknown (the request may have been applied): same handling as a
  // lost connection.
  [Z.ZCONNECTIONLOSS, 'CONNECTION_LOSS'],
  [Z.ZOPERATIONTIMEOUT, 'CONNECTION_LOSS'],
  [Z.ZSESSIONMOVED, 'CONNECTION_LOSS'],
  [Z.ZSESSIONEXPIRED, 'SESSION_EXPIRED'],
  // The C client answers ZINVALIDSTATE for calls on a handle whose session expired.
  [Z.ZINVALIDSTATE, 'SESSION_EXPIRED'],
]);

/**
 * A failure of the binding as a {@link ZkError} of operation `op` on `path`: its return code
 * mapped to a code, `ZCLOSING` (the handle went away under the call) to `CLOSED` after our own
 * close and to `SESSION_EXPIRED` otherwise.
 */
export function toZkError(error: unknown, op: string, path: string, closed: boolean): ZkError {
  const rc = nativeReturnCode(error);
  let code: ZkErrorCode = (rc !== undefined && CODES.get(rc)) || 'OTHER';
  if (rc === Z.ZCLOSING) {
    // The handle went away under the call: closed by us, or by the C client on expiry.
    code = closed ? 'CLOSED' : 'SESSION_EXPIRED';
  }
  const what = rc === undefined ? messageOf(error) : `${code} (ZooKeeper rc ${rc})`;
  return new ZkError(code, `${op} ${path}: ${what}`, { cause: error });
}

/**
 * The package rejects with `Error('<rc> <text>')` from completions and with
 * `Error('fn: "..." args: "..." result: "<NAME> <rc>"')` when the C call refuses at once.
 */
function nativeReturnCode(error: unknown): number | undefined {
  const message = messageOf(error);
  const match = /^(-\d+) /.exec(message) ?? / (-\d+)"$/.exec(message);
  return match ? Number(match[1]) : undefined;
}

/** Node data as the binding returns it (a Buffer, a string or null) as a Buffer. */
export function toBuffer(data: Buffer | string | null): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return data == null ? EMPTY : Buffer.from(data);
}
