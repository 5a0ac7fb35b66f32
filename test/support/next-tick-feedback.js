// Preloaded (`node -r`, with --allow-natives-syntax and --expose-gc) by
// test/next-tick-shape.e2e-spec.ts. On SIGUSR2, once the event loop is idle (no nextTick entry
// alive), it runs full garbage collections, then prints V8's feedback state of the object
// literal `process.nextTick` builds each entry with: one state per computed or named key
// ("MONOMORPHIC" on the fast path, "MEGAMORPHIC" once V8 gave up on it).
'use strict';

const nextTick = process.nextTick;
// Compiled at run time so that no other tool has to parse V8's native syntax.
const getFeedback = new Function('f', 'return %GetFeedback(f)');

process.on('SIGUSR2', () => {
  setImmediate(() => {
    for (let i = 0; i < 4; i++) globalThis.gc();
    const states = getFeedback(nextTick)
      .filter((slot) => slot && slot[0] === 'DefineKeyedOwnPropertyInLiteral')
      .map((slot) => String(slot[1]).split('\n')[0]);
    process.stderr.write(`NEXT_TICK_FEEDBACK ${JSON.stringify(states)}\n`);
  });
});
