import { describeCloudposseShard } from '../../support/hcl-differential';

describeCloudposseShard(0);
