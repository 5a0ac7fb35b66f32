import type { Provider } from '@nestjs/common';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { TypeormGaplessStore } from '../../adapters/typeorm/typeorm-gapless.store';
import { LEAF_GAPLESS_OPTIONS, LEAF_GAPLESS_STORE } from '../leaf.constants';
import { LEAF_MODULE_OPTIONS } from '../leaf.module-definition';
import type { LeafModuleOptions } from '../leaf-options.interface';
import { GaplessNumberService } from './gapless-number.service';
import { resolveGaplessOptions, type ResolvedGaplessOptions } from './gapless-options';

/**
 * Gapless series' providers, registered when `LeafModule` has its `gapless` option: the
 * resolved options, the store on their `dataSource`, the service.
 */
export const GAPLESS_PROVIDERS: Provider[] = [
  {
    provide: LEAF_GAPLESS_OPTIONS,
    useFactory: (raw: LeafModuleOptions) => {
      if (!raw.gapless)
        throw new LeafConfigurationError([
          'gapless: LeafModule.forRootAsync registered gapless series (gapless: true), but the options have no gapless',
        ]);
      return resolveGaplessOptions(raw.gapless);
    },
    inject: [LEAF_MODULE_OPTIONS],
  },
  {
    provide: LEAF_GAPLESS_STORE,
    useFactory: (options: ResolvedGaplessOptions) =>
      new TypeormGaplessStore(options.dataSource, options.lockWaitMs, options.idleInTransactionMs),
    inject: [LEAF_GAPLESS_OPTIONS],
  },
  GaplessNumberService,
];

/** What gapless series export. */
export const GAPLESS_EXPORTS = [GaplessNumberService];
