import { consumerAppSuite } from './consumer-app-suite';

consumerAppSuite({ nest: 12, node: 20, typeorm: '1' });
