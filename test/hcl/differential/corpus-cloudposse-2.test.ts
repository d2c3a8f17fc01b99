import { describeCloudposseShard } from './differential';

describeCloudposseShard(1);
