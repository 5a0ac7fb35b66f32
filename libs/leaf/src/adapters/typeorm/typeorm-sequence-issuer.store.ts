import type { DataSource } from 'typeorm';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import type {
  IssuerRow,
  SequenceIssuerStore,
} from '../../core/sequence/sequence-issuer-store.port';
import { issuerStatements } from './sequence-issuer.sql';
import { changesOneRow, dialectOf } from './sql-dialect';

interface RawIssuerRow {
  holder: string | null;
  address: string | null;
  term: string;
  expired: number | string | boolean;
}

/**
 * The database-held election of sequence mode on MySQL/MariaDB or PostgreSQL (docs/design.md,
 * "Sequence mode on the database"): one autocommit statement per call on the table
 * `leaf_sequence_issuer`, every time taken from the database's clock. `term` is read as text
 * and converted with `BigInt`.
 */
export class TypeormSequenceIssuerStore implements SequenceIssuerStore {
  private readonly sql: ReturnType<typeof issuerStatements>;

  /** @throws {LeafConfigurationError} for a driver other than mysql, mariadb or postgres. */
  constructor(private readonly dataSource: DataSource) {
    const dialect = dialectOf(dataSource);
    if (!dialect?.coordination) {
      throw new LeafConfigurationError([
        `sequence.coordination "database" needs MySQL/MariaDB or PostgreSQL (the segment dataSource is ${dataSource.options.type}): use ZooKeeper`,
      ]);
    }
    this.sql = issuerStatements(dialect);
  }

  async read(name: string, group: number): Promise<IssuerRow> {
    let row = await this.select(name, group);
    if (row === undefined) {
      await this.dataSource.query(this.sql.insert, [name, group]);
      row = await this.select(name, group);
      if (row === undefined) throw new Error(`leaf_sequence_issuer: no row for ${name}/${group}`);
    }
    return {
      holder: row.holder,
      address: row.address,
      term: BigInt(row.term),
      expired: Number(row.expired) === 1,
    };
  }

  async claim(
    name: string,
    group: number,
    claim: { holder: string; address: string; seenTerm: bigint; leaseMs: number },
  ): Promise<bigint | null> {
    const { holder, address, seenTerm, leaseMs } = claim;
    const parameters = [holder, address, String(leaseMs), name, group, seenTerm.toString()];
    return (await this.update(this.sql.claim, parameters)) ? seenTerm + 1n : null;
  }

  renew(name: string, group: number, holder: string, term: bigint, leaseMs: number) {
    return this.update(this.sql.renew, [String(leaseMs), name, group, holder, term.toString()]);
  }

  resign(name: string, group: number, holder: string, term: bigint) {
    return this.update(this.sql.resign, [name, group, holder, term.toString()]);
  }

  private async select(name: string, group: number): Promise<RawIssuerRow | undefined> {
    const rows = (await this.dataSource.query(this.sql.select, [name, group])) as RawIssuerRow[];
    return rows[0];
  }

  /** One UPDATE in autocommit; true when it changed the row. */
  private update(sql: string, parameters: unknown[]): Promise<boolean> {
    return changesOneRow(this.dataSource, sql, parameters);
  }
}
