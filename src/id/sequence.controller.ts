import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiTags } from '@nestjs/swagger';
import { SequenceService } from 'nestjs-leaf';
import { InvalidArgumentError } from 'nestjs-leaf/errors';
import {
  MAX_FORWARD_ITEMS,
  SequencePeerGuard,
  type SequenceForwardedRange,
} from 'nestjs-leaf/server';
import { parseCount } from './count';
import { IdRoutes } from './id-routes';

/**
 * Sequence mode over HTTP: IDs per key that increase across every instance (docs/design.md,
 * "Sequence mode"), in the formats of the other modes; plus the route other instances
 * forward their calls to.
 */
@ApiTags('sequence')
@Controller('api/sequence')
export class SequenceController extends IdRoutes('sequence', SequenceService, {
  get: [
    'Next sequence ID of a tag: above every ID returned before the call',
    'The ID in decimal, no newline',
  ],
  ids: 'count sequence IDs of a tag, increasing',
}) {
  /**
   * Between instances: which instance answers here and the groups it issues for now
   * (`SequenceService.instance`); each instance asks its own advertised address at start, and a
   * forwarder asks an issuer that did not answer or refused. With a cluster secret, peers only
   * (docs/security.md, "Peers").
   */
  @Get('internal/instance')
  @UseGuards(SequencePeerGuard)
  @ApiExcludeEndpoint()
  instance(): { run: string; serving: number[] } {
    return this.service.instance();
  }

  /**
   * Between instances: a batch of `keys` and `counts` (comma-separated, same length) served
   * by this instance's own issuer only, one range or one error body per item. With a cluster
   * secret, peers only; the batch is held to what a forwarding instance sends
   * (`SequenceService.issueForwarded`).
   */
  @Get('internal/ranges')
  @UseGuards(SequencePeerGuard)
  @ApiExcludeEndpoint()
  async ranges(
    @Query('keys') keys: unknown,
    @Query('counts') counts: unknown,
  ): Promise<{ ranges: SequenceForwardedRange[] }> {
    if (typeof keys !== 'string' || typeof counts !== 'string') {
      throw new InvalidArgumentError('keys and counts are required', 'keys');
    }
    const keyList = keys.split(',', MAX_FORWARD_ITEMS + 1);
    const countList = counts.split(',', MAX_FORWARD_ITEMS + 1);
    if (keyList.length !== countList.length) {
      throw new InvalidArgumentError('keys and counts differ in length', 'counts');
    }
    const items = keyList.map((key, i) => ({ key, count: parseCount(countList[i]) }));
    return { ranges: await this.service.issueForwarded(items) };
  }
}
