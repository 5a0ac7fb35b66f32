/** What a redacted secret is replaced with. */
export const REDACTED = '***';

/**
 * The credentials of a URL in any scheme (`mysql://user:password@host`, a mistyped
 * `postgress://…`, `https://token@host`): `scheme://`, the user, and after a `:` the
 * password up to the last `@` of the URL (a password may hold an unescaped `@` or `/`; a URL
 * ends at white space, a quote, `<`, `>` or a backtick). An `@` later in the path hides a
 * little more than the password: too much, never too little.
 */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s"'`<>/:@]*(?::[^\s"'`<>]*)?)@/gi;

/** `password=…`, `secret=…`, `token=…` in a query string or a key=value text. */
const NAMED_SECRET = /\b((?:pass(?:word)?|pwd|secret|token|api[_-]?key)=)[^\s&"'`<>;,]+/gi;

/** `Authorization: Bearer <token>` and `Basic <credentials>` as they appear in text. */
const AUTHORIZATION = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;

/**
 * `text` with every secret it may carry replaced by {@link REDACTED}: the password of a URL
 * (`mysql://leaf:***@db/leaf`; user information without a `:` is hidden whole), a
 * `password=`/`secret=`/`token=` value, a bearer or basic credential, and each of `secrets`
 * (values known to be secret, such as the admin token) wherever it appears. The one function
 * every log line, start-up refusal and error answer of the application goes through
 * (docs/security.md, "Secrets").
 */
export function redactSecrets(text: string, secrets: Iterable<string> = []): string {
  let out = text
    .replace(URL_CREDENTIALS, (_match, scheme: string, userInfo: string) => {
      const colon = userInfo.indexOf(':');
      return colon < 0
        ? `${scheme}${REDACTED}@`
        : `${scheme}${userInfo.slice(0, colon)}:${REDACTED}@`;
    })
    .replace(NAMED_SECRET, `$1${REDACTED}`)
    .replace(AUTHORIZATION, `$1 ${REDACTED}`);
  for (const secret of secrets) {
    // Short values would hide ordinary words; secrets the configuration accepts are longer.
    if (secret.length >= 8 && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}
