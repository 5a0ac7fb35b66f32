import { createHash } from 'node:crypto';
import { runCli } from './cli';

async function hash(input: string, args: string[] = ['tokens', 'hash']) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, {
    env: {},
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    input: () => Promise.resolve(input),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('leaf tokens hash', () => {
  const token = 'hPq3xY7+Zk2/Lm9wQ0aB4cD5eF6gH7iJ8kL9mN0oP1Q=';
  const expected = createHash('sha256').update(token).digest('hex');

  it('prints the SHA-256 of the token on standard input (one trailing line break dropped)', async () => {
    expect(await hash(`${token}\n`)).toEqual({ code: 0, out: expected, err: '' });
    expect(await hash(token, ['tokens', 'hash', '--json'])).toEqual({
      code: 0,
      out: JSON.stringify({ sha256: expected }),
      err: '',
    });
  });

  it.each([
    ['too short', 'short'],
    ['two lines', `${token}\nsecond-line-of-input`],
    ['a space', 'a token with spaces 0123456789'],
    ['nothing', ''],
  ])('refuses %s with exit 2, never echoing the input', async (_label, input) => {
    const result = await hash(input);
    expect(result.code).toBe(2);
    expect(result.out).toBe('');
    expect(result.err).toMatch(/the token on standard input must be/);
    if (input !== '') expect(result.err).not.toContain(input.split('\n')[0]);
  });

  it('takes no token as an argument (it would land in the shell history)', async () => {
    const result = await hash('', ['tokens', 'hash', token]);
    expect(result.code).toBe(2);
    expect(result.err).not.toContain(token);
  });
});
