/**
 * Runs benchmark modules and prints their rows as one table: `npm run bench`
 * (bench/all.bench.ts) and each module alone through {@link runAlone}. Detail lines go to
 * stderr so stdout holds only the machine line and the table.
 */
import { loadavg } from 'node:os';
import { BenchServers } from './http-load';
import {
  benchOptions,
  failedRow,
  machineLine,
  markdownTable,
  type BenchContext,
  type BenchModule,
  type BenchOptions,
  type BenchRow,
} from './report';

/**
 * Runs `modules` in sequence (a module that throws contributes one failed row, and the
 * others still run), stops the shared servers, prints the machine line and the table on
 * stdout. Sets a non-zero exit code when a module failed.
 */
export async function runBenchmarks(
  modules: BenchModule[],
  options: BenchOptions = benchOptions(),
): Promise<void> {
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const servers = new BenchServers(log);
  const context: BenchContext = { ...options, log, servers: () => servers.urls() };
  const sections: { module: BenchModule; rows: BenchRow[] }[] = [];
  const loadAtStart = loadavg()[0];
  let failed = false;
  try {
    for (const module of modules) {
      const started = Date.now();
      log(`\n== ${module.title} (${module.name})`);
      let rows: BenchRow[];
      try {
        rows = await module.run(context);
      } catch (error) {
        failed = true;
        log(String(error instanceof Error ? (error.stack ?? error) : error));
        rows = [failedRow(module.name, error)];
      }
      log(`   ${module.name}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
      sections.push({ module, rows });
    }
  } finally {
    await servers.stop();
  }
  process.stdout.write(`\n${machineLine(options, loadAtStart)}\n\n${markdownTable(sections)}\n`);
  if (failed) process.exitCode = 1;
}

/** `if (require.main === module) runAlone(bench)`: one module's table, as its npm script. */
export function runAlone(module: BenchModule): void {
  runBenchmarks([module]).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
