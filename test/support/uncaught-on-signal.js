// Preloaded (`node -r`) by test/app-log-flush.e2e-spec.ts: SIGUSR2 makes the application
// throw an error nothing catches, as a bug in a callback would.
process.on('SIGUSR2', () => {
  throw new Error('uncaught error thrown by the test (SIGUSR2)');
});
