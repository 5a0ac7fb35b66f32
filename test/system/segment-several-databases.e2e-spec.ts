import { describeWhen } from '../support/services';
import { mariaDbInstalled } from './harness/mariadb-server';
import {
  expectSeveralDatabasesHandled,
  segmentSeveralDatabases,
} from './scenarios/segment-several-databases';

jest.setTimeout(180_000);

describeWhen(
  mariaDbInstalled(),
  'the MariaDB server package (mariadbd, mariadb-install-db): bash scripts/services.sh installs it',
  'system (CI subset): three databases per tag, one killed 5 s, one frozen 5 s',
  () => {
    it('serves every tag throughout, never repeats an ID', async () => {
      expectSeveralDatabasesHandled(await segmentSeveralDatabases('ci', 5_000));
    });
  },
);
