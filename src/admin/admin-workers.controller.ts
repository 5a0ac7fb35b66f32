import { Get } from '@nestjs/common';
import { SnowflakeService } from 'nestjs-leaf';
import { ModeRoutes } from '../id/id-routes';
import { AdminRoutes } from './admin.guard';
import { workerRowJson, type WorkerRowJson } from './worker-row.json';

/**
 * Snowflake worker IDs for operators (`LEAF_ADMIN_TOKEN` set; `Authorization: Bearer
 * <token>`): every worker ID of the namespace in ZooKeeper, who holds it and until when
 * (docs/operations.md, "Worker IDs"). Empty when the worker ID does not come from ZooKeeper.
 */
@AdminRoutes('admin/workers', 401, 404)
export class AdminWorkersController extends ModeRoutes('snowflake', SnowflakeService) {
  @Get()
  async list(): Promise<{ workers: WorkerRowJson[] }> {
    const workers = await this.service.workers();
    const now = Date.now();
    return { workers: workers.map((worker) => workerRowJson(worker, now)) };
  }
}
