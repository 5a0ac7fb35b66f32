import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { LeafClient } from '../../client/leaf-client';

/** Closes the module's {@link LeafClient} at shutdown (requests in flight finish first). */
@Injectable()
export class LeafClientLifecycle implements BeforeApplicationShutdown {
  constructor(private readonly client: LeafClient) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
