/**
 * Retries `check` (an assertion, or anything that throws until the condition holds) every
 * `intervalMs` until it passes or `timeoutMs` has passed, then rethrows its last error.
 * For tests that wait on background work (a reconnect, a scheduled refresh).
 */
export async function eventually(
  check: () => void | Promise<void>,
  timeoutMs = 5000,
  intervalMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
