'use strict';
/**
 * osls plugin: the deployment bucket osls creates gets `ObjectOwnership: BucketOwnerEnforced` (ACLs
 * disabled, every object owned by the bucket owner), like the service's own buckets.
 *
 * osls's `provider.deploymentBucket` settings cover public access, versioning, encryption and tags
 * but not ownership controls (lib/plugins/aws/provider.js, `deploymentBucket` schema), and the
 * first deploy creates the bucket from the core template (`cloudformation-template-create-stack.json`),
 * which `resources` overrides never reach. So this adds the property right after osls generated the
 * core template (`package:initialize`), to that template (in memory and the file osls wrote) and to
 * the compiled template every later update deploys.
 */
const path = require('node:path');

const OWNERSHIP = { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] };

class DeploymentBucketOwnership {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'after:package:initialize': () => this.enforce() };
  }

  enforce() {
    const provider = this.serverless.service.provider;
    const id = this.serverless.getProvider('aws').naming.getDeploymentBucketLogicalId();
    let changed = false;
    for (const template of [provider.compiledCloudFormationTemplate, provider.coreCloudFormationTemplate]) {
      const bucket = template && template.Resources && template.Resources[id];
      // A deployment bucket named in `deploymentBucket.name` is not created by the stack.
      if (bucket === undefined) continue;
      bucket.Properties = { ...bucket.Properties, OwnershipControls: OWNERSHIP };
      changed = true;
    }
    if (!changed || provider.coreCloudFormationTemplate === undefined) return;
    const file = path.join(
      this.serverless.serviceDir,
      '.serverless',
      this.serverless.getProvider('aws').naming.getCoreTemplateFileName(),
    );
    this.serverless.utils.writeFileSync(file, provider.coreCloudFormationTemplate);
  }
}

module.exports = DeploymentBucketOwnership;
