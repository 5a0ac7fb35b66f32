/**
 * `leaf tokens hash`: the SHA-256 of a client token, for `LEAF_CLIENT_TOKENS` (docs/security.md,
 * "Callers"). The token is read from standard input, so it appears in no process list or shell
 * history, and is never printed.
 */
import { createHash } from 'node:crypto';
import { LEAF_CLIENT_OPTION_RULES } from 'nestjs-leaf/client';
import { CliError, unknownSubcommand, usage, type Output } from './cli-support';

/**
 * Runs `tokens <sub>`: `hash` reads one token from `input` (a trailing line break is dropped)
 * and prints its SHA-256 in hexadecimal.
 * @throws {CliError} exit 2 for a usage error or a token the remote client would refuse.
 */
export async function tokens(
  args: string[],
  output: Output,
  input: () => Promise<string>,
): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'hash') throw unknownSubcommand('tokens', sub);
  if (rest.length > 0)
    throw usage('tokens hash reads the token from standard input, not arguments');
  const token = (await input()).replace(/\r?\n$/, '');
  const rule = LEAF_CLIENT_OPTION_RULES.token;
  if (!rule.pattern.test(token)) {
    // Never echo the input: it is meant to be a secret.
    throw new CliError(
      2,
      `the token on standard input must be ${rule.rangeNote} (one line; not shown)`,
    );
  }
  const sha256 = createHash('sha256').update(token, 'utf8').digest('hex');
  output.out(output.json ? JSON.stringify({ sha256 }) : sha256);
}
