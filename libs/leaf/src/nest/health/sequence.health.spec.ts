import { HealthIndicatorService } from '@nestjs/terminus';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import type { SequenceService } from '../sequence/sequence.service';
import { SequenceHealthIndicator } from './sequence.health';

describe('SequenceHealthIndicator', () => {
  const options = {} as ResolvedLeafOptions;
  const indicator = (readiness: ReturnType<SequenceService['readiness']>) =>
    new SequenceHealthIndicator(new HealthIndicatorService(), options, {
      readiness: () => readiness,
      stats: () => ({
        groups: [
          { group: 0, state: 'issuer' },
          { group: 1, state: 'follower' },
        ],
      }),
    } as unknown as SequenceService);

  it('is down with the reason and every readiness detail while a group cannot be served', () => {
    const down = indicator({
      ready: false,
      reason: 'group 1 has no issuer',
      coordination: 'zookeeper',
      groupsWithoutIssuer: [1],
      unreachableIssuers: ['10.0.0.2:8080'],
      advertiseChecked: true,
    });
    expect(down.isHealthy()).toEqual({
      sequence: {
        status: 'down',
        message: 'group 1 has no issuer',
        coordination: 'zookeeper',
        issuing: [0],
        groupsWithoutIssuer: [1],
        unreachableIssuers: ['10.0.0.2:8080'],
        advertiseChecked: true,
      },
    });
  });

  it('is up when readiness says so (coordination null before it is known), and up with enabled: false when off', () => {
    const ready = indicator({
      ready: true,
      groupsWithoutIssuer: [],
      unreachableIssuers: [],
      advertiseChecked: false,
    });
    expect(ready.isHealthy('seq')).toEqual({
      seq: expect.objectContaining({ status: 'up', coordination: null, issuing: [0] }),
    });
    expect(
      new SequenceHealthIndicator(new HealthIndicatorService(), options, null).isHealthy(),
    ).toEqual({
      sequence: { status: 'up', enabled: false },
    });
  });
});
