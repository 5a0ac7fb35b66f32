import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

import { FaketimeClock, LIBFAKETIME_MT, faketimeAvailable } from './support/faketime';
import { sleep } from './support/id-load';
import { describeWhen } from './support/services';

/** Prints the wall-clock and the monotonic milliseconds since it started, every 100 ms. */
const PROBE = `
const { performance } = require('node:perf_hooks');
const start = Date.now(), t0 = performance.now();
const timer = setInterval(() => console.log(Date.now() - start, Math.round(performance.now() - t0)), 100);
process.stdin.on('end', () => clearInterval(timer)).resume();
`;

describeWhen(
  faketimeAvailable(),
  `${LIBFAKETIME_MT} (install with \`bash scripts/services.sh faketime\`)`,
  'FaketimeClock (test support for clock faults)',
  () => {
    it('starts a process behind the real clock and steps it back while it runs, leaving the monotonic clock real', async () => {
      const clock = new FaketimeClock(-10_000);
      const child = spawn(process.execPath, ['-e', PROBE], {
        env: { ...process.env, ...clock.env() },
      });
      try {
        const samples: Array<[wall: number, mono: number]> = [];
        const lines = createInterface({ input: child.stdout });
        lines.on('line', (line) => samples.push(line.split(' ').map(Number) as [number, number]));
        await sleep(1_500);
        clock.set(-15_000); // a 5 s step back while it runs
        await sleep(2_500);
        child.stdin.end();
        await once(child, 'exit');

        const stepped = samples.findIndex(([wall], i) => i > 0 && wall < samples[i - 1][0] - 4_000);
        expect(stepped).toBeGreaterThan(0);
        const [before, after] = [samples[stepped - 1], samples[stepped]];
        expect(before[0] - after[0]).toBeGreaterThan(4_500);
        expect(before[0] - after[0]).toBeLessThan(5_500);
        // Monotonic time kept going forward across the step.
        expect(after[1]).toBeGreaterThan(before[1]);
      } finally {
        child.kill('SIGKILL');
        clock.dispose();
      }
    }, 20_000);
  },
);
