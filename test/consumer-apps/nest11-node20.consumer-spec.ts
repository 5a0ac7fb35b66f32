import { consumerAppSuite } from './consumer-app-suite';

consumerAppSuite({ nest: 11, node: 20, typeorm: '0.3' });
