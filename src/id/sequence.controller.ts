import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiTags } from '@nestjs/swagger';
import { ApiEmptyKey, ApiIdList, ApiIdText } from '../openapi';
import {
  IdService,
  InvalidArgumentError,
  MAX_FORWARD_ITEMS,
  SequenceService,
  type SequenceForwardedRange,
} from 'nestjs-leaf';
import { idList, parseCount } from './count';

/**
 * Sequence mode over HTTP: IDs per key that increase across every instance (docs/design.md,
 * "Sequence mode"), in the formats of the other modes; plus the route other instances
 * forward their calls to.
 */
@ApiTags('sequence')
@Controller('api/sequence')
export class SequenceController {
  constructor(
    private readonly idService: IdService,
    private readonly sequence: SequenceService,
  ) {}

  /** A route called with an empty key is a client error, not an unknown route. */
  @Get(['get', 'ids'])
  @ApiEmptyKey()
  emptyKey(): never {
    throw new InvalidArgumentError('key must not be empty', 'key');
  }

  /** The next ID of the key in decimal, `text/plain`, no newline. */
  @Get('get/:key')
  @Header('content-type', 'text/plain; charset=utf-8')
  @ApiIdText(
    'Next sequence ID of a tag: above every ID returned before the call',
    'The ID in decimal, no newline',
  )
  async get(@Param('key') key: string): Promise<string> {
    return (await this.idService.get('sequence', key)).toString();
  }

  /** `count` consecutive IDs as decimal strings. */
  @Get('ids/:key')
  @ApiIdList('count sequence IDs of a tag, increasing')
  async ids(
    @Param('key') key: string,
    @Query('count') count: unknown,
  ): Promise<{ key: string; ids: string[] }> {
    return idList(this.idService, 'sequence', key, count);
  }

  /**
   * Between instances: which instance answers here and the groups it issues for now
   * (`SequenceService.instance`); each instance asks its own advertised address at start, and a
   * forwarder asks an issuer that did not answer or refused.
   */
  @Get('internal/instance')
  @ApiExcludeEndpoint()
  instance(): { run: string; serving: number[] } {
    return this.sequence.instance();
  }

  /**
   * Between instances: a batch of `keys` and `counts` (comma-separated, same length) served
   * by this instance's own issuer only, one range or one error body per item.
   */
  @Get('internal/ranges')
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
    return { ranges: await this.sequence.issueForwarded(items) };
  }
}
