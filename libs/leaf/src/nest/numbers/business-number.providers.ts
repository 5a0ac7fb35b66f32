import type { Provider } from '@nestjs/common';
import { TypeormNumberFormatStore } from '../../adapters/typeorm/typeorm-number-format.store';
import type { NumberFormatStore } from '../../core/numbers/number-format-store.port';
import { LEAF_NUMBER_FORMAT_STORE, LEAF_RESOLVED_OPTIONS } from '../leaf.constants';
import type { ResolvedLeafOptions } from '../leaf-options.interface';
import { rangeAllocation } from '../leaf-modes';
import { BusinessNumberService } from './business-number.service';

/**
 * Business numbers' own providers, registered by `LeafModule` when a mode that counts them
 * (segment or sequence, `NUMBER_MODES`) is on: the formats' store on the one `dataSource`
 * ranges come from (`null` otherwise: the service then answers a configuration error), and
 * the service.
 */
export const BUSINESS_NUMBER_PROVIDERS: Provider[] = [
  {
    provide: LEAF_NUMBER_FORMAT_STORE,
    useFactory: (options: ResolvedLeafOptions): NumberFormatStore | null => {
      const allocation = rangeAllocation(options);
      return allocation.kind === 'dataSource'
        ? new TypeormNumberFormatStore(allocation.dataSource)
        : null;
    },
    inject: [LEAF_RESOLVED_OPTIONS],
  },
  BusinessNumberService,
];

/** What business numbers export. */
export const BUSINESS_NUMBER_EXPORTS = [BusinessNumberService];
