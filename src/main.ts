import { Logger } from '@nestjs/common';
import { LeafConfigurationError } from '@app/leaf';
import { createApp } from './bootstrap';
import { loadAppConfig } from './config/app-config';

async function main(): Promise<void> {
  const config = loadAppConfig();
  const app = await createApp(config);
  await app.listen(config.port, config.host);
  Logger.log(`Leaf listening on http://${config.host}:${config.port}`, 'Bootstrap');
}

main().catch((error: unknown) => {
  // A refusal to start says what is wrong and exits non-zero, without a stack for known causes.
  const message = error instanceof LeafConfigurationError || (error instanceof Error && 'code' in error)
    ? (error as Error).message
    : error instanceof Error
      ? (error.stack ?? error.message)
      : String(error);
  console.error(`Leaf failed to start: ${message}`);
  process.exit(1);
});
