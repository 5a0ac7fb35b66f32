import { Controller, Get, Optional, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { SnowflakeService } from 'nestjs-leaf';
import { modeService } from '../id/id-routes';
import { ApiLeafErrors } from '../openapi';
import { AdminTokenGuard } from './admin.guard';
import { workerRowJson, type WorkerRowJson } from './worker-row.json';

/**
 * Snowflake worker IDs for operators (`LEAF_ADMIN_TOKEN` set; `Authorization: Bearer
 * <token>`): every worker ID of the namespace in ZooKeeper, who holds it and until when
 * (docs/operations.md, "Worker IDs"). Empty when the worker ID does not come from ZooKeeper.
 */
@ApiTags('admin')
@ApiBearerAuth('admin')
@ApiLeafErrors(401, 404)
@Controller('admin/workers')
@UseGuards(AdminTokenGuard)
export class AdminWorkersController {
  constructor(@Optional() private readonly snowflake?: SnowflakeService) {}

  @Get()
  async list(): Promise<{ workers: WorkerRowJson[] }> {
    const workers = await modeService(this.snowflake, 'snowflake').workers();
    const now = Date.now();
    return { workers: workers.map((worker) => workerRowJson(worker, now)) };
  }
}
