import { randomBytes } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { LEAF_DEFAULTS } from '../../core/leaf-defaults';
import { RangeLoader } from '../../core/segment/range-loader';
import { LeafEventRecorder } from '../metrics/leaf-event.recorder';
import { segmentLoadLog } from '../segment/allocation-log';
import { segmentBufferOptions } from '../segment/segment-options.resolver';
import type { SchedulerRegistry } from '@nestjs/schedule';
import { SequenceHttpTransport } from '../../adapters/http/sequence-forward.transport';
import { assertValidCount, assertValidKey } from '../../core/arguments';
import { LeafError } from '../../core/errors/leaf.error';
import { SequenceLeaseExpiredError, SequenceNoIssuerError } from '../../core/errors/sequence.error';
import { monotonicMs } from '../../core/leaf-observer';
import type { LeafAllocStore } from '../../core/segment/leaf-alloc-store.port';
import {
  assertForwardedBatch,
  ForwardBatcher,
  MAX_FORWARD_ITEMS,
  type ForwardItem,
  type ForwardLimits,
  type SequenceForwardTransport,
} from '../../core/sequence/forward-batcher';
import { keyGroup } from '../../core/sequence/key-group';
import { GroupBalance } from '../../core/sequence/group-balance';
import type { SequenceGroupSnapshot } from '../../core/sequence/issuing-term';
import { leafErrorBody, type LeafErrorBody } from '../http/leaf-exception.filter';
import {
  LEAF_ALLOC_STORE,
  LEAF_ISSUER_ELECTION,
  LEAF_JOB_NAMES,
  LEAF_RESOLVED_OPTIONS,
  LEAF_SCHEDULER,
  LEAF_SEQUENCE_TRANSPORT,
} from '../leaf.constants';
import { ScheduledTask } from '../scheduled-task';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import type { ResolvedSequenceOptions } from '../sequence-options.interface';
import { modeOptions } from '../leaf-modes';
import { AdvertiseCheck } from './advertise.check';
import { IssuerReachability } from './issuer-reachability';
import { SequencePeerAuth } from './sequence-peer-auth';
import { sequenceReadiness, type SequenceReadiness } from './sequence-readiness';
import type { IssuerElection, IssuerGroup } from '../../core/sequence/issuer-election.port';

/** Pause between attempts while a call waits for an issuer. */
const RETRY_PAUSE_MS = 50;
/** How long start-up waits for the election's store before going on (the rounds keep trying). */
const CONNECT_WAIT_MS = 5000;

/** One item of a forwarded batch as the issuer answers it. */
export type SequenceForwardedRange =
  { readonly start: string; readonly end: string } | { readonly error: LeafErrorBody };

/** Counters of sequence mode, for metrics. */
export interface SequenceStats {
  /** Calls this instance forwarded to another instance's issuer. */
  readonly forwardedCalls: number;
  /** Forwarded batches sent, and the calls they carried (sum), for the mean batch size. */
  readonly forwardBatches: number;
  readonly forwardBatchCalls: number;
  /** Times this instance became an issuer (all groups), and stopped being one. */
  readonly elections: number;
  readonly demotions: number;
  /** Forwarded items this instance answered as issuer. */
  readonly servedItems: number;
  readonly groups: SequenceGroupSnapshot[];
}

/**
 * Sequence mode in `LeafModule` (docs/design.md, "Sequence mode"): IDs per key that increase
 * across every instance. Each key belongs to a group; each group elects one issuer through
 * its {@link IssuerElection} (`sequence.coordination`, `nest/coordination.assembly.ts`), which takes ranges from the `leaf_alloc` table as segment
 * mode does and hands IDs out in order. Every other instance forwards its calls to the issuer,
 * the calls of one event-loop turn in one request ({@link ForwardBatcher}).
 */
@Injectable()
export class SequenceService
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private readonly logger = new Logger(SequenceService.name);
  private readonly options: ResolvedSequenceOptions;
  /** True from start to shutdown: the election is open. */
  private open = false;
  private groups: IssuerGroup[] = [];
  private batcher: ForwardBatcher | null = null;
  private transport: SequenceForwardTransport | null = null;
  private rounds: ScheduledTask | null = null;
  /** This process's identity in the elections and on the probe route. */
  readonly run = randomBytes(6).toString('hex');
  /** Whether the advertised address reaches this instance (groups stand for election only then). */
  private advertise: AdvertiseCheck | null = null;
  private readonly issuers = new IssuerReachability();
  private readonly balance = new GroupBalance(() => this.groups.map((group) => group.snapshot()));
  /** What a forwarded batch may hold, sent and served alike. */
  private get forwardLimits(): ForwardLimits {
    return { maxItemCount: this.leafOptions.maxBatchSize, maxItems: MAX_FORWARD_ITEMS };
  }
  private counts = {
    forwardedCalls: 0,
    forwardBatches: 0,
    forwardBatchCalls: 0,
    elections: 0,
    demotions: 0,
    servedItems: 0,
  };

  constructor(
    @Inject(LEAF_RESOLVED_OPTIONS) private readonly leafOptions: ResolvedLeafOptions,
    @Inject(LEAF_ALLOC_STORE) private readonly store: LeafAllocStore,
    @Inject(LEAF_ISSUER_ELECTION) private readonly election: IssuerElection,
    @Inject(LEAF_SCHEDULER) private readonly scheduler: SchedulerRegistry,
    @Optional()
    @Inject(LEAF_SEQUENCE_TRANSPORT)
    private readonly transportOverride?: SequenceForwardTransport | null,
    @Optional() private readonly events?: LeafEventRecorder,
    @Optional() private readonly peers?: SequencePeerAuth,
  ) {
    this.options = modeOptions(leafOptions, 'sequence');
  }

  async onModuleInit(): Promise<void> {
    const options = this.options;
    this.open = true;
    this.transport =
      this.transportOverride ??
      new SequenceHttpTransport(
        options.forwardTimeoutMs,
        undefined,
        this.peers?.signer() ?? null,
        options.tls ?? undefined,
      );
    this.batcher = new ForwardBatcher(this.transport, this.forwardLimits, {
      batchSent: (calls) => {
        this.counts.forwardBatches++;
        this.counts.forwardBatchCalls += calls;
      },
      delivered: (address) => this.issuers.delivered(address),
      undelivered: (address) => this.issuers.undelivered(address),
      batchDone: (address, calls, items, durationMs, error) =>
        this.events?.batchForwarded(address, calls, items, durationMs, error),
    });
    const advertise = (this.advertise = new AdvertiseCheck(
      options.advertise,
      this.run,
      this.transport.probe?.bind(this.transport),
      this.logger,
    ));
    // Segment mode's loader and buffer settings (its defaults with segment mode off): the
    // per-instance range guard, the repair and refusal log lines and the allocation metrics,
    // as for segment tags (docs/design.md, "Sequence mode").
    const segment = this.leafOptions.segment ?? LEAF_DEFAULTS.segment;
    const loader = new RangeLoader(
      this.store,
      {
        maxConcurrentLoads: segment.maxConcurrentLoads,
        observer: this.events ?? null,
        mode: 'sequence',
        journal: this.leafOptions.journal,
      },
      this.leafOptions.clock,
      segmentLoadLog(this.logger),
    ).load;
    const campaign = {
      name: this.leafOptions.name,
      run: this.run,
      address: options.advertise,
      leaseMs: options.sessionTimeoutMs,
      leaseMarginMs: options.leaseMarginMs,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      resignAfterFailingMs: options.handOverAfterMs,
      buffer: segmentBufferOptions(segment),
      loader,
      balance: this.balance,
      issuing: () => this.groups.filter((group) => group.state === 'issuer').length,
      eligible: () => advertise.checked,
      clock: this.leafOptions.clock,
      monotonic: monotonicMs,
      listener: {
        elected: (group: number, term: number) => {
          this.counts.elections++;
          this.events?.issuerElected(group, term);
          this.logger.log(`Sequence group ${group}: this instance is the issuer (term ${term})`);
        },
        demoted: (group: number, reason: string) => {
          this.counts.demotions++;
          this.events?.issuerDemoted(group, reason);
          this.logger.warn(`Sequence group ${group}: no longer the issuer: ${reason}`);
        },
      },
    };
    const election = this.election;
    this.groups = Array.from({ length: options.groups }, (_, g) => election.campaign(g, campaign));
    try {
      await election.open(CONNECT_WAIT_MS);
      await this.tickAll();
    } catch (error) {
      // Only opening the election throws here (a round never does).
      this.logger.warn(
        `Sequence mode: ${election.source}${options.connect ? ` (${options.connect})` : ''} not reachable yet; calls are refused with LEAF_SEQUENCE_NO_ISSUER until it is: ${String(error)}`,
      );
    }
  }

  /** Starts the election rounds (`LEAF_JOB_NAMES.sequenceElection`). */
  onApplicationBootstrap(): void {
    if (this.groups.length === 0) return;
    this.rounds = new ScheduledTask(
      this.scheduler,
      LEAF_JOB_NAMES.sequenceElection(this.leafOptions.name),
      () => this.tickAll(),
      (error) => this.logger.warn(`Sequence election round failed: ${String(error)}`),
    );
    this.rounds.start(this.options.heartbeatIntervalMs);
  }

  /** Resigns every group this instance issues for: a successor starts without waiting. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.groups.map((group) => group.resign()));
  }

  /** Stops the rounds and closes the election and the forwarding connections. Never throws. */
  async onApplicationShutdown(): Promise<void> {
    await this.rounds?.stop();
    this.rounds = null;
    this.transport?.close();
    if (!this.open) return;
    this.open = false;
    const warn = (error: unknown) => this.logger.warn(`Closing failed: ${String(error)}`);
    await this.election.close().catch(warn);
  }

  /**
   * The next ID of `key`: larger than every ID of `key` returned, by any instance, before this
   * call began.
   * @throws {InvalidArgumentError} for a malformed key.
   * @throws {SequenceNoIssuerError} when no issuer answered within `sequence.waitMs`.
   * @throws {LeafError} the issuer's own error (`TagNotFoundError`, an allocation error, ...).
   */
  async get(key: string): Promise<bigint> {
    return (await this.take(key, 1)).start;
  }

  /**
   * `count` increasing IDs of `key` (consecutive), all larger than every ID of `key` returned
   * before this call began.
   * @throws {InvalidArgumentError} unless `count` is an integer in 1..maxBatchSize.
   * @throws as {@link get}.
   */
  async getIds(key: string, count: number): Promise<bigint[]> {
    assertValidCount(count, this.leafOptions.maxBatchSize);
    const { start } = await this.take(key, count);
    return Array.from({ length: count }, (_, i) => start + BigInt(i));
  }

  /**
   * Answers a batch another instance forwarded (the application's internal route): each item
   * from this instance's own issuer only, never forwarded again. The batch is held to what a
   * forwarding instance sends ({@link assertForwardedBatch}), checked as a whole before any
   * item is served: a refused batch takes nothing.
   * @throws {InvalidArgumentError} for a malformed batch.
   */
  async issueForwarded(items: readonly ForwardItem[]): Promise<SequenceForwardedRange[]> {
    this.requireStarted();
    assertForwardedBatch(items, this.forwardLimits);
    this.counts.servedItems += items.length;
    return Promise.all(
      items.map(async ({ key, count }): Promise<SequenceForwardedRange> => {
        try {
          const group = this.groups[keyGroup(key, this.groups.length)]!;
          if (group.state !== 'issuer') {
            throw new SequenceNoIssuerError(key, 'the instance asked is not the issuer');
          }
          const { start, end } = await group.issue(key, count);
          return { start: start.toString(), end: end.toString() };
        } catch (error) {
          const leaf =
            error instanceof LeafError
              ? error
              : new SequenceNoIssuerError(key, String(error), { cause: error });
          return { error: leafErrorBody(leaf) };
        }
      }),
    );
  }

  /**
   * What the probe route answers (`SEQUENCE_PROBE_PATH`): this process's identity and the
   * groups it issues for now.
   */
  instance(): { run: string; serving: number[] } {
    const serving = this.groups.flatMap((group, index) => (group.issuing ? [index] : []));
    return { run: this.run, serving };
  }

  /** Sequence readiness ({@link sequenceReadiness}). */
  readiness(): SequenceReadiness {
    return sequenceReadiness({
      coordination: this.coordination(),
      groups: this.groups,
      issuers: this.issuers,
      probes: this.transport?.probe !== undefined,
      advertiseChecked: this.advertise?.checked ?? false,
    });
  }

  /** Counters and each group's state, for metrics and monitoring. */
  stats(): SequenceStats {
    return { ...this.counts, groups: this.groups.map((group) => group.snapshot()) };
  }

  private async take(key: string, count: number): Promise<{ start: bigint; end: bigint }> {
    this.requireStarted();
    assertValidKey(key);
    const index = keyGroup(key, this.groups.length);
    const group = this.groups[index]!;
    const deadline = monotonicMs() + this.options.waitMs;
    for (;;) {
      let refusal: LeafError;
      const address = group.state === 'issuer' ? null : group.issuerAddress;
      const forwardTo = address !== this.options.advertise ? address : null;
      try {
        if (group.state === 'issuer') return await group.issue(key, count);
        if (forwardTo !== null) {
          this.counts.forwardedCalls++;
          return await this.batcher!.forward(forwardTo, key, count);
        }
        const coordination = this.coordination();
        refusal = new SequenceNoIssuerError(
          key,
          coordination?.connected === false
            ? `${coordination.source} is not reachable`
            : 'no issuer is elected for its group yet',
        );
      } catch (error) {
        if (!(error instanceof SequenceNoIssuerError || error instanceof SequenceLeaseExpiredError))
          throw error;
        // The issuer forwarded to starts issuing, or hands over: not served until its probe
        // says otherwise.
        if (forwardTo !== null) this.issuers.refused(forwardTo, index);
        refusal = error;
      }
      const remaining = deadline - monotonicMs();
      if (remaining <= 0 || !this.open) throw refusal;
      await this.leafOptions.clock.sleep(Math.min(RETRY_PAUSE_MS, remaining));
    }
  }

  /** The election's label and whether every group's last round reached it; null unless open. */
  private coordination() {
    if (!this.open) return null;
    const { kind, source } = this.election;
    return { kind, source, connected: this.groups.every((group) => group.reachable) };
  }

  private requireStarted(): void {
    if (this.groups.length === 0) {
      throw new SequenceNoIssuerError('*', 'sequence mode has not started');
    }
  }

  private async tickAll(): Promise<void> {
    this.balance.newRound();
    this.advertise?.check();
    this.issuers.probe(
      new Set(this.groups.map((g) => g.issuerAddress).filter((a): a is string => a !== null)),
      this.transport?.probe?.bind(this.transport),
    );
    await Promise.all(this.groups.map((group) => group.tick()));
  }
}
