import { describeCloudposseShard } from './differential';

describeCloudposseShard(0);
