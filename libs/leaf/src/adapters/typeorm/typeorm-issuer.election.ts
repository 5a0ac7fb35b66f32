import type { DataSource } from 'typeorm';
import { RowIssuerElection } from '../../core/sequence/row-issuer.election';
import { TypeormSequenceIssuerStore } from './typeorm-sequence-issuer.store';

/**
 * The issuer election in `leaf_sequence_issuer` of a MySQL/MariaDB or PostgreSQL DataSource
 * (docs/design.md, "Sequence mode on the database"); the DataSource is the application's.
 */
export class TypeormIssuerElection extends RowIssuerElection {
  constructor(dataSource: DataSource) {
    super(new TypeormSequenceIssuerStore(dataSource));
  }
}
