import { consumerAppSuite } from './consumer-app-suite';

consumerAppSuite({ nest: 12, node: 24, typeorm: '1' });
