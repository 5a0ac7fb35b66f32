import type { EnvVar } from './app-env';

/**
 * The variables of who may reach the application and how (docs/security.md): HTTPS, the
 * admin token and the monitoring pages, the client tokens. Part of `APP_ENV`, in its order.
 */
export const ACCESS_ENV: readonly EnvVar[] = [
  {
    name: 'LEAF_TLS_CERT_FILE',
    rule: {
      type: 'string',
      default: null,
      defaultNote: 'unset: plain HTTP',
      rangeNote: 'a PEM file; with `LEAF_TLS_KEY_FILE`',
      doc: 'Serve HTTPS on `PORT` with this certificate chain.',
    },
  },
  {
    name: 'LEAF_TLS_KEY_FILE',
    rule: {
      type: 'string',
      default: null,
      defaultNote: 'unset: plain HTTP',
      rangeNote: 'a PEM file; with `LEAF_TLS_CERT_FILE`',
      doc: "The certificate's private key (PEM), read at start.",
    },
  },
  {
    name: 'LEAF_ADMIN_TOKEN',
    secret: true,
    rule: {
      type: 'string',
      default: null,
      defaultNote: 'unset: no admin routes',
      pattern: /^.{16,}$/,
      rangeNote: 'at least 16 characters',
      doc: 'Bearer token of the admin routes, which exist only with it.',
    },
  },
  {
    name: 'LEAF_MONITOR_PAGES',
    rule: {
      type: 'enum',
      values: ['open', 'token', 'off'],
      default: 'open',
      defaultNote: '`open`; production: `token` (`off` without an admin token)',
      doc: 'Who may see `/cache` and `/db`: all, admin-token holders, or nobody.',
    },
  },
  {
    name: 'LEAF_CLIENT_TOKENS',
    secret: true,
    rule: {
      type: 'string',
      default: null,
      defaultNote: 'unset: the ID routes are open',
      rangeNote:
        'a JSON array of `{name, sha256, modes, tags, idsPerSecond?, burst?}`; exclusive with `LEAF_CLIENT_TOKENS_FILE`',
      doc: 'Client tokens required on the ID routes (docs/security.md, "Callers").',
    },
  },
  {
    name: 'LEAF_CLIENT_TOKENS_FILE',
    rule: {
      type: 'string',
      default: null,
      defaultNote: 'unset',
      rangeNote: 'the path of a file holding `LEAF_CLIENT_TOKENS`’s JSON',
      doc: '`LEAF_CLIENT_TOKENS` read from a file at start.',
    },
  },
];
