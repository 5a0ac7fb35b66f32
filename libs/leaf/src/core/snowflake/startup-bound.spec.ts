import { startupBoundFromNode, type StartupBoundInput } from './startup-bound';
import type { WorkerState } from './worker-state';

const T0 = 1_700_000_000_000;
const PATH = '/snowflake/leaf/forever/10.0.0.8:8080-0000000000';

const state = (overrides: Partial<WorkerState>): WorkerState => ({
  version: 2,
  name: 'leaf',
  identity: '10.0.0.8:8080',
  workerId: 0,
  reservedUntil: T0 + 10_000,
  zkNode: PATH,
  zkSyncedAt: T0,
  zkHorizon: T0 + 60_000,
  run: 'a',
  updatedAt: T0,
  ...overrides,
});

const input = (overrides: Partial<StartupBoundInput>): StartupBoundInput => ({
  path: PATH,
  data: {
    ip: '10.0.0.8',
    port: 8080,
    timestamp: T0,
    reservedUntil: T0 + 10_000,
    horizon: T0 + 60_000,
    run: 'a',
  },
  created: false,
  cached: null,
  stateFile: '/state/snowflake-leaf-10.0.0.8_8080.json',
  localRunwayMs: 15_000,
  ...overrides,
});

describe('startupBoundFromNode', () => {
  it('a node created now carries nothing: no wait, and no horizon for local extensions yet', () => {
    expect(startupBoundFromNode(input({ created: true }))).toEqual({
      bound: T0 - 1,
      source: `new node ${PATH}`,
      remote: null,
    });
  });

  it("waits past the last writer's horizon (its own runway, not ours) when nothing proves it ended", () => {
    const start = startupBoundFromNode(input({}));
    expect(start.bound).toBe(T0 + 60_000);
    expect(start.source).toMatch(/horizon: its last writer \(run a\)/);
    expect(start.remote).toEqual({ writtenAt: T0, horizon: T0 + 60_000 });
  });

  it('also when this host kept a state file of another run (the writer is elsewhere)', () => {
    const start = startupBoundFromNode(
      input({ cached: state({ run: 'b', reservedUntil: T0 + 5000 }) }),
    );
    expect(start.bound).toBe(T0 + 60_000);
  });

  it("trusts node + state file when their last writer is this host's previous run (its lock is ours now)", () => {
    const start = startupBoundFromNode(input({ cached: state({ reservedUntil: T0 + 12_000 }) }));
    expect(start.bound).toBe(T0 + 12_000); // the file: a local extension after the last node write
    expect(start.source).toMatch(/has ended/);
    expect(start.remote).toEqual({ writtenAt: T0, horizon: T0 + 60_000 });
    const nodeAhead = startupBoundFromNode(input({ cached: state({ reservedUntil: T0 + 3000 }) }));
    expect(nodeAhead.bound).toBe(T0 + 10_000); // a node write whose file write never happened
  });

  it('a graceful stop recorded its last millisecond as bound and horizon: no wait anywhere', () => {
    const released = input({
      data: {
        ip: '10.0.0.8',
        port: 8080,
        timestamp: T0,
        reservedUntil: T0 - 5,
        horizon: T0 - 5,
        run: 'a',
      },
    });
    expect(startupBoundFromNode(released).bound).toBe(T0);
  });

  it("a node from before horizons: timestamp + this run's runway, unless this host's file recorded that very write", () => {
    const old = { ip: '10.0.0.8', port: 8080, timestamp: T0, reservedUntil: T0 + 10_000 };
    const start = startupBoundFromNode(input({ data: old }));
    expect(start.bound).toBe(T0 + 15_000);
    expect(start.source).toMatch(/no horizon recorded/);
    const v1 = state({ run: null, zkHorizon: null, zkSyncedAt: T0, reservedUntil: T0 + 11_000 });
    expect(startupBoundFromNode(input({ data: old, cached: v1 })).bound).toBe(T0 + 11_000);
    const otherWrite = state({ run: null, zkHorizon: null, zkSyncedAt: T0 - 3000 });
    expect(startupBoundFromNode(input({ data: old, cached: otherWrite })).bound).toBe(T0 + 15_000);
  });

  it('a node written by the Java Leaf: timestamp + one 3 s heartbeat, whatever the state file says', () => {
    const java = { ip: '10.0.0.8', port: 8080, timestamp: T0 };
    const start = startupBoundFromNode(input({ data: java, cached: state({ reservedUntil: T0 }) }));
    expect(start.bound).toBe(T0 + 3000);
    expect(start.source).toMatch(/Java Leaf/);
  });

  it("never waits less than this host's own file records", () => {
    const start = startupBoundFromNode(
      input({ cached: state({ run: 'b', reservedUntil: T0 + 90_000 }) }),
    );
    expect(start.bound).toBe(T0 + 90_000);
  });
});
