import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian's `faketime` package; `scripts/services.sh` installs it. */
export const LIBFAKETIME_MT = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

export function faketimeAvailable(): boolean {
  return existsSync(LIBFAKETIME_MT);
}

/**
 * A wall-clock offset for child processes, through libfaketime preloaded into them.
 *
 * The offset lives in a file the library re-reads (at most `cacheSeconds` old), so a
 * running process can be stepped back or forward with {@link set}. The monotonic clock
 * is left real (`FAKETIME_DONT_FAKE_MONOTONIC`), as on a host whose NTP daemon steps
 * the wall clock: timers, `performance.now()` and `process.hrtime` keep going forward.
 */
export class FaketimeClock {
  private readonly dir = mkdtempSync(join(tmpdir(), 'leaf-faketime-'));
  private readonly file = join(this.dir, 'offset');

  constructor(
    offsetMs = 0,
    private readonly cacheSeconds = 1,
  ) {
    if (!faketimeAvailable()) {
      throw new Error(`${LIBFAKETIME_MT} is missing: run scripts/services.sh faketime`);
    }
    this.set(offsetMs);
  }

  /** Moves the faked wall clock to `offsetMs` from the real one (negative = behind). */
  set(offsetMs: number): void {
    if (!Number.isInteger(offsetMs))
      throw new Error(`offset must be whole milliseconds: ${offsetMs}`);
    const seconds = (offsetMs / 1000).toFixed(3);
    // Write, then rename over the file: a process re-reading it never sees it half written.
    writeFileSync(`${this.file}.next`, `${offsetMs >= 0 ? '+' : ''}${seconds}s\n`);
    renameSync(`${this.file}.next`, this.file);
  }

  /** Environment for `spawn`: merge it over `process.env`. */
  env(): Record<string, string> {
    return {
      LD_PRELOAD: LIBFAKETIME_MT,
      FAKETIME_TIMESTAMP_FILE: this.file,
      FAKETIME_CACHE_DURATION: String(this.cacheSeconds),
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    };
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
