import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';

/**
 * Loads the optional peer dependency `name` on first use.
 * @param needs who needs it, with its verb (`LeafTracing needs`), for the error.
 * @param install what to install (`name@range`).
 * @throws {LeafConfigurationError} when `name` is not installed; any other failure to load
 *   it (a broken native addon) as it is.
 */
export function loadOptionalPeer<T>(name: string, needs: string, install: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(name) as T;
  } catch (error) {
    // Node's "Cannot find module" for the package itself, not for something it requires.
    // (Read by shape: a test runner's resolver throws an Error of another realm.)
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    const missing = code === 'MODULE_NOT_FOUND' && String(message).includes(`'${name}'`);
    if (!missing) throw error;
    throw new LeafConfigurationError([
      `${needs} ${name} (an optional peer dependency of nestjs-leaf): npm install ${install}`,
    ]);
  }
}
