import { describeCloudposseShard } from './differential';

describeCloudposseShard(2);
