import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';

/**
 * Loads the optional peer dependency `name` on first use.
 * @param needs who needs it, with its verb (`LeafTracing needs`), for the error.
 * @param install what to install (`name@range`).
 * @throws {LeafConfigurationError} when `name` is not installed.
 */
export function loadOptionalPeer<T>(name: string, needs: string, install: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(name) as T;
  } catch {
    throw new LeafConfigurationError([
      `${needs} ${name} (an optional peer dependency of nestjs-leaf): npm install ${install}`,
    ]);
  }
}
