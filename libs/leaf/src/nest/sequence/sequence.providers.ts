import type { Provider } from '@nestjs/common';
import { issuerElection } from '../coordination.assembly';
import {
  LEAF_ISSUER_ELECTION,
  LEAF_RESOLVED_OPTIONS,
  LEAF_SEQUENCE_TRANSPORT,
  LEAF_ZK_CLIENT_FACTORY,
} from '../leaf.constants';
import { SequencePeerAuth } from './sequence-peer-auth';
import { SequenceService } from './sequence.service';

/**
 * Sequence mode's providers, registered by `LeafModule` only when the mode is on (with the
 * allocation store, segment mode's or its own).
 */
export const SEQUENCE_PROVIDERS: Provider[] = [
  // null: keep-alive HTTP (SequenceService); tests override it with an in-process fake.
  { provide: LEAF_SEQUENCE_TRANSPORT, useValue: null },
  {
    provide: LEAF_ISSUER_ELECTION,
    useFactory: issuerElection,
    inject: [LEAF_RESOLVED_OPTIONS, LEAF_ZK_CLIENT_FACTORY],
  },
  SequencePeerAuth,
  SequenceService,
];

/** What sequence mode's module exports (`SequencePeerAuth` for `SequencePeerGuard`). */
export const SEQUENCE_EXPORTS = [SequenceService, SequencePeerAuth];
