import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { LeafIdSubscriber } from '../../adapters/typeorm/ids/leaf-id.subscriber';
import { LeafConfigurationError } from '../../core/errors/leaf-configuration.error';
import { LEAF_TYPEORM_MODULE_OPTIONS } from './leaf-typeorm.module-definition';
import type { LeafTypeOrmOptions } from './leaf-typeorm.options';

/**
 * Puts this application's {@link LeafIdSubscriber} on its DataSources when the module starts
 * and takes it off when it stops, so a DataSource shared with another application (or
 * outliving this one) never calls a closed ID source.
 */
@Injectable()
export class LeafTypeOrmRegistrar implements OnModuleInit, OnModuleDestroy {
  private registered: DataSource[] = [];

  constructor(
    private readonly subscriber: LeafIdSubscriber,
    private readonly moduleRef: ModuleRef,
    @Inject(LEAF_TYPEORM_MODULE_OPTIONS) private readonly options: LeafTypeOrmOptions,
  ) {}

  /** @throws {LeafConfigurationError} when a named DataSource is not in the application. */
  onModuleInit(): void {
    const problems: string[] = [];
    const found: DataSource[] = [];
    for (const entry of this.options.dataSources ?? [DataSource]) {
      try {
        found.push(
          entry instanceof DataSource ? entry : this.moduleRef.get(entry, { strict: false }),
        );
      } catch {
        problems.push(
          `LeafTypeOrmModule found no DataSource under ${String((entry as { name?: string }).name ?? entry)}: import TypeOrmModule.forRoot() or list the DataSources in dataSources`,
        );
      }
    }
    if (problems.length > 0) throw new LeafConfigurationError(problems);
    for (const dataSource of found) {
      if (!dataSource.subscribers.includes(this.subscriber)) {
        dataSource.subscribers.push(this.subscriber);
        this.registered.push(dataSource);
      }
    }
  }

  onModuleDestroy(): void {
    for (const dataSource of this.registered) {
      const at = dataSource.subscribers.indexOf(this.subscriber);
      if (at >= 0) dataSource.subscribers.splice(at, 1);
    }
    this.registered = [];
  }
}
