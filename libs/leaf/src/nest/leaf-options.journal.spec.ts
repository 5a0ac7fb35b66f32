import { hostname } from 'node:os';
import { LeafConfigurationError } from '../core/errors/leaf-configuration.error';
import { InMemoryAllocStore } from '../testing/in-memory-alloc.store';
import { resolveLeafOptions } from './leaf-options.resolver';

const segment = { store: new InMemoryAllocStore() };

describe('resolveLeafOptions: journal and instance', () => {
  it('is off by default (the table needs its migration), whatever the instance', () => {
    expect(resolveLeafOptions({ segment }).journal).toBeNull();
    expect(resolveLeafOptions({ segment, instance: 'pod-a' }).journal).toBeNull();
  });

  it('names the instance: the option, else the advertised snowflake or sequence address, else the host name', () => {
    expect(resolveLeafOptions({ segment, journal: true, instance: 'pod-a' }).journal).toEqual({
      instance: 'pod-a',
    });
    expect(
      resolveLeafOptions({ segment, journal: true, snowflake: { workerId: 1, enabled: false } })
        .journal,
    ).toEqual({ instance: hostname().slice(0, 255) });
    expect(
      resolveLeafOptions({
        segment,
        journal: true,
        sequence: { advertise: 'http://10.0.0.7:8080', zookeeper: { connect: 'zk:2181' } },
      }).journal,
    ).toEqual({ instance: '10.0.0.7:8080' });
  });

  it('refuses an instance that is empty, too long or holds control characters', () => {
    for (const instance of ['', 'x'.repeat(256), 'a\u0000b', 'a\nb']) {
      expect(() => resolveLeafOptions({ segment, journal: true, instance })).toThrow(
        LeafConfigurationError,
      );
    }
    expect(() => resolveLeafOptions({ segment, journal: 'yes' as unknown as boolean })).toThrow(
      /journal/,
    );
  });
});
