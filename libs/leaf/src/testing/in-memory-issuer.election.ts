import { RowIssuerElection } from '../core/sequence/row-issuer.election';
import { InMemorySequenceIssuerStore } from './in-memory-sequence-issuer.store';

/**
 * The in-memory adapter of `IssuerElection`: the issuer rows' election on
 * {@link InMemorySequenceIssuerStore}. Elections given one store are one election (several
 * instances); `store.failing` makes it unreachable.
 */
export class InMemoryIssuerElection extends RowIssuerElection {
  /** @param now the rows' clock (milliseconds) */
  constructor(now: () => number, store = new InMemorySequenceIssuerStore(now)) {
    super(store, 'memory', 'the in-memory election', 'in memory');
  }
}
