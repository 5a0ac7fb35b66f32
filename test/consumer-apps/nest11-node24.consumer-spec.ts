import { consumerAppSuite } from './consumer-app-suite';

consumerAppSuite({ nest: 11, node: 24, typeorm: '0.3' });
