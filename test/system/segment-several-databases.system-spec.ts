import { describeWhen } from '../support/services';
import { mariaDbInstalled } from './harness/mariadb-server';
import {
  expectSeveralDatabasesHandled,
  segmentSeveralDatabases,
} from './scenarios/segment-several-databases';

jest.setTimeout(600_000);

describeWhen(
  mariaDbInstalled(),
  'the MariaDB server package (mariadbd, mariadb-install-db): bash scripts/services.sh installs it',
  'system: three databases per tag, one killed for 30 s, one frozen for 30 s (private MariaDB servers)',
  () => {
    it('serves every tag throughout, never repeats an ID', async () => {
      expectSeveralDatabasesHandled(await segmentSeveralDatabases('full', 30_000));
    });
  },
);
