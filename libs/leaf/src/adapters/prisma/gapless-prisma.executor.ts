import type { GaplessSqlExecutor } from '../../core/gapless/gapless-store.port';

/** What {@link prismaGaplessExecutor} uses of a Prisma interactive transaction client. */
export interface PrismaRawTransaction {
  $queryRawUnsafe(query: string, ...values: unknown[]): Promise<unknown>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<unknown>;
}

/**
 * A Prisma interactive transaction (`prisma.$transaction(async (tx) => …)`) as the executor
 * of `GaplessNumberService.next` (docs/gapless.md): reads through `$queryRawUnsafe`, writes
 * through `$executeRawUnsafe`, in the transaction's connection.
 */
export function prismaGaplessExecutor(tx: PrismaRawTransaction): GaplessSqlExecutor {
  return {
    query: (sql, parameters = []) =>
      /^\s*SELECT\b/i.test(sql)
        ? tx.$queryRawUnsafe(sql, ...parameters)
        : tx.$executeRawUnsafe(sql, ...parameters),
  };
}
