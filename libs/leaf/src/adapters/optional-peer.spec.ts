import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { loadOptionalPeer } from './optional-peer';

describe('loadOptionalPeer', () => {
  it('loads an installed package', () => {
    expect(loadOptionalPeer<typeof import('node:path')>('node:path', 'x needs', 'y')).toBe(
      jest.requireActual('node:path'),
    );
  });

  it('refuses a missing package with a LeafConfigurationError that says what to install', () => {
    expect(() => loadOptionalPeer('nestjs-leaf-no-such-peer', 'X needs', 'it@^1')).toThrow(
      new LeafConfigurationError([
        'X needs nestjs-leaf-no-such-peer (an optional peer dependency of nestjs-leaf): npm install it@^1',
      ]),
    );
  });

  it('rethrows a package that is installed but fails to load as it is', () => {
    const broken = new Error('native addon built for another Node');
    jest.doMock(
      'nestjs-leaf-broken-peer',
      () => {
        throw broken;
      },
      { virtual: true },
    );
    expect(() => loadOptionalPeer('nestjs-leaf-broken-peer', 'X needs', 'it')).toThrow(broken);
    jest.dontMock('nestjs-leaf-broken-peer');
  });
});
