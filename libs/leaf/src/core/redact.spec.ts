import { REDACTED, redactSecrets } from './redact';

describe('redactSecrets', () => {
  it.each([
    ['mysql://leaf:S3cret@db:3306/leaf', 'mysql://leaf:***@db:3306/leaf'],
    ['postgres://u:S3cret@127.0.0.1:5432/test', 'postgres://u:***@127.0.0.1:5432/test'],
    // A mistyped scheme is still a URL with a password.
    ['got "postgress://user:PASSWORD@host/db"', 'got "postgress://user:***@host/db"'],
    ['a:p@ss/w@rd in mysql://a:p@ss/w@rd@h/db', 'a:p@ss/w@rd in mysql://a:***@h/db'],
    ['https://TOKEN@leaf.example', 'https://***@leaf.example'],
    ['redis://:pw@cache:6379', 'redis://:***@cache:6379'],
    ['x mysql://u:1@a/db, postgres://v:2@b/db y', 'x mysql://u:***@a/db, postgres://v:***@b/db y'],
    ['/x?password=hunter22&a=1', '/x?password=***&a=1'],
    ['Authorization: Bearer abc.def-123', 'Authorization: Bearer ***'],
  ])('%s', (input, expected) => {
    expect(redactSecrets(input)).toBe(expected);
  });

  it('leaves text without secrets as it is', () => {
    for (const text of [
      'mysql://db:3306/leaf',
      'http://10.0.0.1:8080/api/segment/get/order',
      'LEAF_DB_URL must be mysql://user:pass@host:3306/db'.replace('user:pass@', ''),
      'leaf_alloc on 127.0.0.1:3306/leaf',
    ]) {
      expect(redactSecrets(text)).toBe(text);
    }
  });

  it('hides every occurrence of a known secret, not words shorter than 8 characters', () => {
    const token = 'an-admin-token-of-some-length';
    expect(redactSecrets(`a ${token} b ${token}`, [token])).toBe(`a ${REDACTED} b ${REDACTED}`);
    expect(redactSecrets('the leaf is green', ['leaf'])).toBe('the leaf is green');
  });
});
