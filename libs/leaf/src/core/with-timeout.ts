/**
 * Waits for `promise` at most `ms` milliseconds. Resolves `{ ok: true, value }`
 * or `{ ok: false }` on timeout; a rejection of `promise` propagates. The timer is
 * always cleared, so nothing is left behind.
 */
export async function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
): Promise<{ ok: true; value: T } | { ok: false }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ ok: false }>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false }), ms);
  });
  try {
    return await Promise.race([promise.then((value) => ({ ok: true as const, value })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
