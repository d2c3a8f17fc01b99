/**
 * `osls package` (offline) builds the CloudFormation template and the function zips; this checks
 * the template (every function and event, the IAM statements' resources, bucket encryption, public
 * access and TLS policies of every bucket, DLQs, lifecycle rules, alarms, concurrency and API
 * throttling, also with every wiring parameter set) and runs a packaged function from its zip
 * against s3rver, which proves the bundle and the unbundled @cdktf/hcl2json (WebAssembly in worker
 * threads) work together.
 */
import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import * as yauzl from 'yauzl';
import { ReportLayout } from '../../src/service/keys';
import { makeTarGz } from '../support/archive';
import { lambdaEnv, REPORTS_BUCKET, UPLOADS_BUCKET } from '../support/lambda';
import { generateTestKey, startRegistry } from '../support/registry-server';
import { startS3rver, type RunningS3rver } from '../support/s3rver';
import { lockText } from '../support/lock-fixtures';

const run = promisify(execFile);
const REPO = resolve(__dirname, '..', '..');

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: unknown };
interface Template {
  Conditions?: Record<string, unknown>;
  Resources: Record<string, Resource>;
}

/**
 * `osls package` (offline, what `npm run package` runs) into `dir`, with `--param name=value` for
 * each of `params`; returns the update and the create (first deploy) templates. Runs one at a time:
 * serverless-esbuild builds in the shared `.esbuild/` directory.
 */
async function packageService(
  dir: string,
  params: Record<string, string> = {},
): Promise<{ update: Template; create: Template }> {
  // serverless-esbuild stages each function's package in `<os.tmpdir()>/<function>-<pid>-…` and
  // leaves it there: give it a temporary directory of its own and remove that afterwards.
  const staging = await mkdtemp(join(tmpdir(), 'tfguard-osls-'));
  try {
    await packageIn(dir, params, staging);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  const read = async (name: string) => JSON.parse(await readFile(join(dir, name), 'utf8')) as Template;
  return {
    update: await read('cloudformation-template-update-stack.json'),
    create: await read('cloudformation-template-create-stack.json'),
  };
}

async function packageIn(dir: string, params: Record<string, string>, staging: string): Promise<void> {
  await run(
    process.execPath,
    [
      join(REPO, 'node_modules', 'osls', 'bin', 'serverless.js'),
      'package',
      '--stage',
      'test',
      '--package',
      dir,
      ...Object.entries(params).flatMap(([name, value]) => ['--param', `${name}=${value}`]),
    ],
    {
      cwd: REPO,
      timeout: 150_000,
      env: {
        ...process.env,
        SLS_TELEMETRY_DISABLED: '1',
        SLS_NOTIFICATIONS_MODE: 'off',
        TMPDIR: staging,
      },
    },
  );
}

let out: string;
let template: Template;
let createTemplate: Template;

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'tfguard-package-'));
  ({ update: template, create: createTemplate } = await packageService(out));
}, 180_000);

afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

const ofType = (type: string, t: Template = template): Array<[string, Resource]> =>
  Object.entries(t.Resources).filter(([, r]) => r.Type === type);
const res = (id: string, t: Template = template): Resource => {
  const r = t.Resources[id];
  if (r === undefined) throw new Error(`no resource ${id}`);
  return r;
};

/**
 * CloudFormation values as text: `{ "Fn::GetAtt": ["X", "Arn"] }` → `X.Arn`, `Fn::Sub` → its
 * string, `Ref` → `Ref:X`, `Fn::Join` → the parts joined (a `Ref` inside as `${X}`, as in a Sub).
 */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (Array.isArray(v['Fn::GetAtt'])) return `${(v['Fn::GetAtt'] as string[]).join('.')}`;
  if (typeof v['Fn::Sub'] === 'string') return v['Fn::Sub'];
  if (typeof v.Ref === 'string') return `Ref:${v.Ref}`;
  if (Array.isArray(v['Fn::Join'])) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map((p) => text(p).replace(/^Ref:(.*)$/, '$${$1}')).join(separator);
  }
  return JSON.stringify(value);
}

const FUNCTIONS: Record<string, { handler: string; role: string }> = {
  ScanUploadLambdaFunction: { handler: 'handlers/upload-scan.handler', role: 'ScanUploadRole' },
  CreateScanLambdaFunction: { handler: 'handlers/api.createScan', role: 'CreateScanRole' },
  CreateUploadLambdaFunction: { handler: 'handlers/api.createUpload', role: 'CreateUploadRole' },
  GetScanLambdaFunction: { handler: 'handlers/api.getScan', role: 'GetScanRole' },
  AuditStartLambdaFunction: { handler: 'handlers/audit-start.handler', role: 'AuditStartRole' },
  AuditWorkerLambdaFunction: { handler: 'handlers/audit-worker.handler', role: 'AuditWorkerRole' },
};

test('six functions on nodejs22.x / arm64, each with its own role', () => {
  const functions = ofType('AWS::Lambda::Function');
  expect(functions.map(([id]) => id).sort()).toEqual(Object.keys(FUNCTIONS).sort());
  for (const [id, fn] of functions) {
    const p = fn.Properties as {
      Runtime: string;
      Architectures: string[];
      Handler: string;
      Role: unknown;
      MemorySize: number;
      Timeout: number;
    };
    expect([id, p.Runtime, p.Architectures, p.Handler, text(p.Role)]).toEqual([
      id,
      'nodejs22.x',
      ['arm64'],
      FUNCTIONS[id]!.handler,
      `${FUNCTIONS[id]!.role}.Arn`,
    ]);
    expect(p.MemorySize).toBeGreaterThanOrEqual(256);
    expect(p.Timeout).toBeGreaterThan(0);
  }
  expect(
    ofType('AWS::IAM::Role')
      .map(([id]) => id)
      .sort(),
  ).toEqual(
    Object.values(FUNCTIONS)
      .map((f) => f.role)
      .sort(),
  );
  // The HTTP API stays within API Gateway's 30 s integration limit.
  expect((res('CreateScanLambdaFunction').Properties as { Timeout: number }).Timeout).toBeLessThanOrEqual(29);
});

test('events: S3 uploads by suffix, three IAM-authorized routes, a schedule, the audit queue', () => {
  const bucket = res('S3BucketUploads').Properties as {
    BucketName: string;
    NotificationConfiguration: {
      LambdaConfigurations: {
        Event: string;
        Function: unknown;
        Filter: { S3Key: { Rules: { Name: string; Value: string }[] } };
      }[];
    };
  };
  expect(bucket.BucketName).toBe('tfguard-uploads-test');
  const configs = bucket.NotificationConfiguration.LambdaConfigurations;
  expect(configs.map((c) => c.Event)).toEqual(Array(4).fill('s3:ObjectCreated:*'));
  expect(configs.map((c) => text(c.Function))).toEqual(Array(4).fill('ScanUploadLambdaFunction.Arn'));
  const rules = configs.map((c) =>
    Object.fromEntries(c.Filter.S3Key.Rules.map((r) => [r.Name.toLowerCase(), r.Value])),
  );
  expect(rules.map((r) => r.prefix)).toEqual(Array(4).fill('uploads/'));
  expect(rules.map((r) => r.suffix).sort()).toEqual(['.tar', '.tar.gz', '.tgz', '.zip']);
  expect(
    ofType('AWS::Lambda::Permission').some(([, p]) => p.Properties.Principal === 's3.amazonaws.com'),
  ).toBe(true);

  const routes = ofType('AWS::ApiGatewayV2::Route').map(
    ([, r]) => r.Properties as { RouteKey: string; AuthorizationType: string; Target: unknown },
  );
  expect(routes.map((r) => [r.RouteKey, r.AuthorizationType]).sort()).toEqual([
    ['GET /scans/{id}', 'AWS_IAM'],
    ['POST /scans', 'AWS_IAM'],
    ['POST /uploads', 'AWS_IAM'],
  ]);

  const schedules = ofType('AWS::Events::Rule');
  expect(schedules).toHaveLength(1);
  expect(schedules[0]![1].Properties).toMatchObject({
    ScheduleExpression: 'cron(0 3 * * ? *)',
    State: 'ENABLED',
  });
  expect(text((schedules[0]![1].Properties.Targets as { Arn: unknown }[])[0]!.Arn)).toBe(
    'AuditStartLambdaFunction.Arn',
  );

  const mappings = ofType('AWS::Lambda::EventSourceMapping');
  expect(mappings).toHaveLength(1);
  const mapping = mappings[0]![1].Properties as Record<string, unknown>;
  expect(text(mapping.EventSourceArn)).toBe('AuditQueue.Arn');
  expect(text(mapping.FunctionName)).toBe('AuditWorkerLambdaFunction.Arn');
  expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
  expect(mapping.BatchSize).toBe(5);
});

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };
function statements(role: string): Array<{ actions: string[]; resources: string[] }> {
  const policies = (res(role).Properties as { Policies: { PolicyDocument: { Statement: Statement[] } }[] })
    .Policies;
  return policies.flatMap((p) =>
    p.PolicyDocument.Statement.map((s) => {
      expect(s.Effect).toBe('Allow');
      return {
        actions: ([] as string[]).concat(s.Action),
        resources: ([] as unknown[]).concat(s.Resource).map(text),
      };
    }),
  );
}

/** Every action → the resources it is granted on. */
function grants(role: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const s of statements(role))
    for (const a of s.actions) out[a] = [...(out[a] ?? []), ...s.resources].sort();
  return out;
}

const UPLOADS = 'arn:${AWS::Partition}:s3:::tfguard-uploads-test';
const REPORTS = '${ReportsBucket.Arn}';

test('IAM: each role grants only what its function does, on named resources', () => {
  for (const role of Object.values(FUNCTIONS).map((f) => f.role)) {
    for (const s of statements(role)) {
      expect(s.actions.some((a) => a === '*' || a.endsWith(':*'))).toBe(false);
      expect(s.resources.some((r) => r === '*')).toBe(false);
    }
  }
  const logs = (fn: string) => [`\${${fn}LogGroup.Arn}:*`];
  expect(grants('ScanUploadRole')).toEqual({
    'logs:CreateLogStream': logs('ScanUpload'),
    'logs:PutLogEvents': logs('ScanUpload'),
    's3:GetObject': [`${REPORTS}/reports/*`, `${UPLOADS}/uploads/*`],
    's3:GetObjectVersion': [`${UPLOADS}/uploads/*`],
    's3:ListBucket': ['ReportsBucket.Arn', UPLOADS],
    's3:PutObject': [`${REPORTS}/reports/*`],
    'sqs:SendMessage': ['ScanUploadDeadLetterQueue.Arn'],
  });
  expect(grants('CreateScanRole')).toEqual({
    'logs:CreateLogStream': logs('CreateScan'),
    'logs:PutLogEvents': logs('CreateScan'),
    // GetObject on scans/*: the presigned report links POST /scans returns act with this role;
    // on policy/*: the organisation's policy (param policyObject, docs/policy.md).
    's3:GetObject': [
      `${REPORTS}/reports/cache/*`,
      `${REPORTS}/reports/policy/*`,
      `${REPORTS}/reports/scans/*`,
    ],
    's3:ListBucket': ['ReportsBucket.Arn'],
    's3:PutObject': [`${REPORTS}/reports/cache/*`, `${REPORTS}/reports/scans/*`],
  });
  expect(grants('CreateUploadRole')).toEqual({
    'logs:CreateLogStream': logs('CreateUpload'),
    'logs:PutLogEvents': logs('CreateUpload'),
    's3:PutObject': [`${REPORTS}/reports/requests/*`, `${UPLOADS}/uploads/*`],
  });
  expect(grants('GetScanRole')).toEqual({
    'logs:CreateLogStream': logs('GetScan'),
    'logs:PutLogEvents': logs('GetScan'),
    's3:GetObject': [`${REPORTS}/reports/requests/*`, `${REPORTS}/reports/scans/*`],
    's3:ListBucket': ['ReportsBucket.Arn'],
  });
  expect(grants('AuditStartRole')).toEqual({
    'logs:CreateLogStream': logs('AuditStart'),
    'logs:PutLogEvents': logs('AuditStart'),
    's3:GetObject': [`${REPORTS}/reports/audits/*`, `${REPORTS}/reports/fleet/*`],
    's3:ListBucket': ['ReportsBucket.Arn'],
    's3:PutObject': [`${REPORTS}/reports/audits/*`, `${REPORTS}/reports/fleet/*`],
    'sqs:SendMessage': ['AuditQueue.Arn', 'AuditStartDeadLetterQueue.Arn'],
  });
  const worker = grants('AuditWorkerRole');
  expect(worker['s3:PutObject']).toEqual([
    `${REPORTS}/reports/audits/*`,
    `${REPORTS}/reports/cache/*`,
    `${REPORTS}/reports/fleet/*`,
    `${REPORTS}/reports/scans/*`,
  ]);
  expect(worker['s3:GetObjectVersion']).toEqual([`${UPLOADS}/uploads/*`]);
  // The organisation's policy (param policyObject) is read before each rescan.
  expect(worker['s3:GetObject']).toContain(`${REPORTS}/reports/policy/*`);
  for (const action of [
    'sqs:ReceiveMessage',
    'sqs:DeleteMessage',
    'sqs:GetQueueAttributes',
    'sqs:ChangeMessageVisibility',
  ]) {
    expect(worker[action]).toEqual(['AuditQueue.Arn']);
  }
  expect(worker['sqs:SendMessage']).toBeUndefined();
  // Nobody but the upload scan and the worker reads uploads; nobody writes there but the presigner.
  for (const role of ['CreateScanRole', 'GetScanRole', 'AuditStartRole']) {
    expect(JSON.stringify(grants(role))).not.toContain('tfguard-uploads-test');
  }
});

const PRIVATE = {
  BlockPublicAcls: true,
  BlockPublicPolicy: true,
  IgnorePublicAcls: true,
  RestrictPublicBuckets: true,
};

/** The bucket policies of `t`, by the logical id of the bucket each applies to. */
function bucketPolicies(t: Template): Record<string, { Statement: Record<string, unknown>[] }> {
  const byName = Object.fromEntries(
    ofType('AWS::S3::Bucket', t).map(([id, b]) => [String(b.Properties.BucketName ?? `Ref:${id}`), id]),
  );
  const out: Record<string, { Statement: Record<string, unknown>[] }> = {};
  for (const [, p] of ofType('AWS::S3::BucketPolicy', t)) {
    const target = text(p.Properties.Bucket);
    const bucket = target.startsWith('Ref:') ? target.slice(4) : byName[target];
    if (bucket === undefined) throw new Error(`a bucket policy for an unknown bucket ${target}`);
    out[bucket] = p.Properties.PolicyDocument as { Statement: Record<string, unknown>[] };
  }
  return out;
}

/**
 * The policy denies every action, on the bucket and on its objects, to requests without TLS.
 * `names`: how the bucket may appear in an ARN (its logical id, its name).
 */
function expectTlsOnly(
  policy: { Statement: Record<string, unknown>[] } | undefined,
  bucket: string,
  names: string[],
): void {
  const deny = policy?.Statement.find(
    (s) =>
      s.Effect === 'Deny' &&
      String(
        (s.Condition as { Bool?: Record<string, unknown> } | undefined)?.Bool?.['aws:SecureTransport'],
      ) === 'false',
  );
  expect([bucket, deny?.Principal, deny?.Action]).toEqual([bucket, '*', 's3:*']);
  // `X.Arn`, `${X.Arn}/*`, `arn:${AWS::Partition}:s3:::name`, `...:::${X}/*` → the bucket part.
  const targets = ([] as unknown[])
    .concat(deny!.Resource)
    .map(text)
    .map((r) => r.replace(/[${}]/g, '').replace(/\.Arn/, ''))
    .map((r) => r.slice(r.lastIndexOf(':') + 1))
    .sort();
  expect([bucket, targets]).toEqual([bucket, [targets[0], `${targets[0]}/*`]]);
  expect(names).toContain(targets[0]);
}

test('every bucket, the deployment bucket included, is encrypted, private, ACL-free and TLS-only', () => {
  const buckets = ofType('AWS::S3::Bucket').map(([id]) => id);
  expect(buckets.sort()).toEqual(['ReportsBucket', 'S3BucketUploads', 'ServerlessDeploymentBucket']);
  const policies = bucketPolicies(template);
  for (const id of buckets) {
    const p = res(id).Properties as Record<string, unknown>;
    expect([id, p.BucketEncryption]).toMatchObject([
      id,
      { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
    ]);
    if (id !== 'ServerlessDeploymentBucket') {
      expect(
        (p.BucketEncryption as { ServerSideEncryptionConfiguration: unknown[] })
          .ServerSideEncryptionConfiguration,
      ).toEqual([{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' }, BucketKeyEnabled: true }]);
    }
    expect([id, p.PublicAccessBlockConfiguration]).toEqual([id, PRIVATE]);
    expect([id, p.OwnershipControls]).toEqual([id, { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] }]);
    expectTlsOnly(policies[id], id, [id, String(p.BucketName)]);
  }
  expect(Object.keys(policies).sort()).toEqual(buckets.sort());
  expect(
    (res('S3BucketUploads').Properties as { VersioningConfiguration: unknown }).VersioningConfiguration,
  ).toEqual({ Status: 'Enabled' });
  // The first deploy creates the deployment bucket from the create template alone: private and
  // TLS-only from the start.
  expect(ofType('AWS::S3::Bucket', createTemplate).map(([id]) => id)).toEqual(['ServerlessDeploymentBucket']);
  expect(res('ServerlessDeploymentBucket', createTemplate).Properties.PublicAccessBlockConfiguration).toEqual(
    PRIVATE,
  );
  expect(res('ServerlessDeploymentBucket', createTemplate).Properties.OwnershipControls).toEqual({
    Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }],
  });
  expectTlsOnly(bucketPolicies(createTemplate).ServerlessDeploymentBucket, 'ServerlessDeploymentBucket', [
    'ServerlessDeploymentBucket',
  ]);
});

test('dead-letter queues, redrive, visibility timeout and async retry settings', () => {
  const queue = res('AuditQueue').Properties as {
    VisibilityTimeout: number;
    RedrivePolicy: { deadLetterTargetArn: unknown; maxReceiveCount: number };
    SqsManagedSseEnabled: boolean;
  };
  const workerTimeout = (res('AuditWorkerLambdaFunction').Properties as { Timeout: number }).Timeout;
  expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * workerTimeout);
  expect(text(queue.RedrivePolicy.deadLetterTargetArn)).toBe('AuditDeadLetterQueue.Arn');
  expect(queue.SqsManagedSseEnabled).toBe(true);
  // The worker records a repository as failed on the queue's last delivery attempt.
  const env = (
    res('AuditWorkerLambdaFunction').Properties as { Environment: { Variables: Record<string, string> } }
  ).Environment.Variables;
  expect(Number(env.TFGUARD_AUDIT_MAX_RECEIVE_COUNT)).toBe(queue.RedrivePolicy.maxReceiveCount);
  for (const id of ['AuditDeadLetterQueue', 'ScanUploadDeadLetterQueue', 'AuditStartDeadLetterQueue']) {
    expect(res(id).Type).toBe('AWS::SQS::Queue');
    expect((res(id).Properties as { SqsManagedSseEnabled: boolean }).SqsManagedSseEnabled).toBe(true);
  }
  const invokeConfigs = Object.fromEntries(
    ofType('AWS::Lambda::EventInvokeConfig').map(([, r]) => {
      const p = r.Properties as {
        FunctionName: unknown;
        MaximumRetryAttempts: number;
        DestinationConfig: { OnFailure: { Destination: unknown } };
      };
      return [
        text(p.FunctionName),
        [p.MaximumRetryAttempts, text(p.DestinationConfig.OnFailure.Destination)],
      ];
    }),
  );
  expect(invokeConfigs).toEqual({
    'Ref:ScanUploadLambdaFunction': [2, 'ScanUploadDeadLetterQueue.Arn'],
    'Ref:AuditStartLambdaFunction': [2, 'AuditStartDeadLetterQueue.Arn'],
  });
  const scanEnv = (
    res('ScanUploadLambdaFunction').Properties as { Environment: { Variables: Record<string, string> } }
  ).Environment.Variables;
  expect(scanEnv).toMatchObject({
    TFGUARD_UPLOADS_BUCKET: 'tfguard-uploads-test',
    TFGUARD_UPLOADS_PREFIX: 'uploads/',
    TFGUARD_REPORTS_BUCKET: 'tfguard-reports-test',
    TFGUARD_REPORTS_PREFIX: 'reports/',
    TFGUARD_SCAN_REGISTRY: 'true',
    POWERTOOLS_SERVICE_NAME: 'tfguard',
    // The stage is a metric dimension (src/config.ts reads it).
    TFGUARD_STAGE: 'test',
    // No access policy by default: a single-tenant install.
    TFGUARD_ACCESS_POLICY: '',
    // No organisation policy by default (docs/policy.md).
    TFGUARD_POLICY_OBJECT: '',
  });
});

// ---------------------------------------------------------------------------------------------
// Production wiring: lifecycle, alarms, concurrency, throttling
// ---------------------------------------------------------------------------------------------

type Rule = {
  Id: string;
  Status: string;
  Prefix?: string;
  Filter?: unknown;
  ExpirationInDays?: number | string;
  NoncurrentVersionExpirationInDays?: number | string;
  ExpiredObjectDeleteMarker?: boolean;
  AbortIncompleteMultipartUpload?: { DaysAfterInitiation: number };
};

function lifecycleRules(bucket: string, t: Template = template): Rule[] {
  const rules = (res(bucket, t).Properties as { LifecycleConfiguration?: { Rules: Rule[] } })
    .LifecycleConfiguration?.Rules;
  expect(rules?.length).toBeGreaterThan(0);
  for (const rule of rules!) {
    expect([rule.Id, rule.Status]).toEqual([rule.Id, 'Enabled']);
    expect(rule.Filter).toBeUndefined();
  }
  return rules!;
}

/** After how many days the rules of `bucket` expire (current version of) `key`; null: never. */
function expiresAfter(rules: Rule[], key: string): number | null {
  const days = rules
    .filter((r) => r.ExpirationInDays !== undefined && key.startsWith(r.Prefix ?? ''))
    .map((r) => Number(r.ExpirationInDays));
  return days.length === 0 ? null : Math.min(...days);
}

function reportLayout(t: Template): ReportLayout {
  const env = (
    res('ScanUploadLambdaFunction', t).Properties as { Environment: { Variables: Record<string, string> } }
  ).Environment.Variables;
  return new ReportLayout(env.TFGUARD_REPORTS_PREFIX!);
}

/** Report keys that are history (expire with reportRetentionDays) and keys that must stay. */
function expectReportRetention(t: Template, days: number, cacheDays = 7): void {
  const layout = reportLayout(t);
  const rules = lifecycleRules('ReportsBucket', t);
  const scanId = '0123456789abcdef0123456789abcdef';
  const run = layout.auditRun('20250101T030000000Z-30cfd3b9');
  const history = [
    ...Object.values(layout.reports(scanId)),
    layout.rejected(scanId),
    layout.uploadRequest('6f1c2b9e-1d2a-4c3b-8e4f-5a6b7c8d9e0f'),
    run.manifest,
    run.members(0),
    run.result('acme/network'),
    run.done(0, 'acme/network'),
    run.partial(0),
    run.summaryJson,
    run.summaryMarkdown,
  ];
  for (const key of history) expect([key, expiresAfter(rules, key)]).toEqual([key, days]);
  const kept = [
    layout.latest('acme/network'),
    layout.latest('scans'),
    layout.auditLatest,
    `${layout.registryCachePrefix}registry-sums/v1/registry.terraform.io/hashicorp/aws/5.0.0.json`,
  ];
  for (const key of kept) expect([key, expiresAfter(rules, key)]).toEqual([key, null]);
  // The remote-module cache expires (remoteModuleCacheDays, default 7): nothing a scan cached
  // outlives it.
  for (const kind of ['package', 'versions', 'tree']) {
    const key = `${layout.registryCachePrefix}remote-modules/v1/${kind}/${'0'.repeat(64)}.json`;
    expect([key, expiresAfter(rules, key)]).toEqual([key, cacheDays]);
  }
  expect(rules.some((r) => r.AbortIncompleteMultipartUpload?.DaysAfterInitiation === 1)).toBe(true);
}

/** Uploads: every object expires (no prefix), old versions a day after, then the delete markers. */
function expectUploadRetention(t: Template, days: number): void {
  const rules = lifecycleRules('S3BucketUploads', t);
  for (const key of ['uploads/acme/network/build 42.tar.gz', 'uploads/x.zip', 'elsewhere.tar'])
    expect([key, expiresAfter(rules, key)]).toEqual([key, days]);
  const expiring = rules.find((r) => r.ExpirationInDays !== undefined)!;
  expect(Number(expiring.NoncurrentVersionExpirationInDays)).toBe(1);
  expect(rules.filter((r) => r.ExpiredObjectDeleteMarker === true && r.Prefix === undefined)).toHaveLength(1);
  expect(rules.some((r) => r.AbortIncompleteMultipartUpload?.DaysAfterInitiation === 1)).toBe(true);
}

test('lifecycle: uploads expire after 90 days, report history after 365, pointers never', () => {
  expectUploadRetention(template, 90);
  expectReportRetention(template, 365);
});

/**
 * The few CloudFormation condition functions the alarms use (`Fn::If`, `Fn::Not`, `Fn::Equals` of
 * literals, `AWS::NoValue`), evaluated; anything else throws rather than guess.
 */
function evaluate(t: Template, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => evaluate(t, v));
  if (value === null || typeof value !== 'object') return value;
  const v = value as Record<string, unknown>;
  if ('Fn::If' in v) {
    const [name, yes, no] = v['Fn::If'] as [string, unknown, unknown];
    return evaluate(t, holds(t, t.Conditions?.[name]) ? yes : no);
  }
  if (v.Ref === 'AWS::NoValue') return undefined;
  return value;
}

function holds(t: Template, condition: unknown): boolean {
  const c = condition as Record<string, unknown> | undefined;
  if (c === undefined) throw new Error('an unknown condition');
  if (Array.isArray(c['Fn::Not'])) return !holds(t, (c['Fn::Not'] as unknown[])[0]);
  if (Array.isArray(c['Fn::Equals'])) {
    const [a, b] = c['Fn::Equals'] as unknown[];
    if (typeof a !== 'string' || typeof b !== 'string') throw new Error(`not literal: ${JSON.stringify(c)}`);
    return a === b;
  }
  if (typeof c.Condition === 'string') return holds(t, t.Conditions?.[c.Condition]);
  throw new Error(`unsupported condition ${JSON.stringify(c)}`);
}

type Alarm = {
  id: string;
  Namespace: string;
  MetricName: string;
  Statistic: string;
  Threshold: number;
  ComparisonOperator: string;
  TreatMissingData: string;
  AlarmName: string;
  dimension: string;
  AlarmActions: unknown;
  OKActions: unknown;
};

/** Every alarm, with its condition functions evaluated and its one dimension as `Name=value`. */
function alarms(t: Template): Alarm[] {
  return ofType('AWS::CloudWatch::Alarm', t).map(([id, r]) => {
    const p = r.Properties;
    const dimensions = p.Dimensions as { Name: string; Value: unknown }[];
    expect([id, dimensions.length]).toEqual([id, 1]);
    return {
      ...(p as Omit<Alarm, 'id' | 'dimension' | 'AlarmActions' | 'OKActions'>),
      id,
      dimension: `${dimensions[0]!.Name}=${text(dimensions[0]!.Value)}`,
      AlarmActions: evaluate(t, p.AlarmActions),
      OKActions: evaluate(t, p.OKActions),
    };
  });
}

/** The dead-letter queues: every queue some redrive policy or on-failure destination names. */
function deadLetterQueues(t: Template): string[] {
  const targets = [
    ...ofType('AWS::SQS::Queue', t).map(
      ([, q]) =>
        (q.Properties.RedrivePolicy as { deadLetterTargetArn?: unknown } | undefined)?.deadLetterTargetArn,
    ),
    ...ofType('AWS::Lambda::EventInvokeConfig', t).map(
      ([, c]) =>
        (c.Properties.DestinationConfig as { OnFailure: { Destination: unknown } }).OnFailure.Destination,
    ),
  ];
  return [
    ...new Set(
      targets
        .filter((a) => a !== undefined)
        .map(text)
        .map((a) => a.replace(/\.Arn$/, '')),
    ),
  ].sort();
}

function expectAlarms(t: Template, stage: string): Alarm[] {
  const all = alarms(t);
  const find = (namespace: string, metric: string, dimension: string) => {
    const found = all.filter(
      (a) => a.Namespace === namespace && a.MetricName === metric && a.dimension === dimension,
    );
    expect([metric, dimension, found.length]).toEqual([metric, dimension, 1]);
    return found[0]!;
  };
  const functions = ofType('AWS::Lambda::Function', t).map(([id]) => id);
  expect(functions).toHaveLength(6);
  const expected: Alarm[] = [];
  for (const fn of functions) {
    for (const metric of ['Errors', 'Throttles']) {
      const alarm = find('AWS/Lambda', metric, `FunctionName=Ref:${fn}`);
      expect([alarm.id, alarm.Statistic, Number(alarm.Threshold)]).toEqual([alarm.id, 'Sum', 0]);
      expected.push(alarm);
    }
  }
  const dlqs = deadLetterQueues(t);
  expect(dlqs).toEqual(['AuditDeadLetterQueue', 'AuditStartDeadLetterQueue', 'ScanUploadDeadLetterQueue']);
  // Every queue is the audit queue or a dead-letter queue: none escapes the alarms.
  expect(
    ofType('AWS::SQS::Queue', t)
      .map(([id]) => id)
      .sort(),
  ).toEqual(['AuditQueue', ...dlqs].sort());
  for (const q of dlqs) {
    const alarm = find('AWS/SQS', 'ApproximateNumberOfMessagesVisible', `QueueName=${q}.QueueName`);
    expect([alarm.id, alarm.Statistic, Number(alarm.Threshold)]).toEqual([alarm.id, 'Maximum', 0]);
    expected.push(alarm);
  }
  const consumed = ofType('AWS::Lambda::EventSourceMapping', t).map(([, m]) =>
    text(m.Properties.EventSourceArn).replace(/\.Arn$/, ''),
  );
  expect(consumed).toEqual(['AuditQueue']);
  const age = find('AWS/SQS', 'ApproximateAgeOfOldestMessage', 'QueueName=AuditQueue.QueueName');
  expect(age.Statistic).toBe('Maximum');
  // A message that keeps failing reaches the DLQ (its own alarm) before it trips the age alarm.
  const queue = res('AuditQueue', t).Properties as {
    VisibilityTimeout: number;
    RedrivePolicy: { maxReceiveCount: number };
  };
  expect(Number(age.Threshold)).toBeGreaterThanOrEqual(
    queue.VisibilityTimeout * queue.RedrivePolicy.maxReceiveCount,
  );
  expected.push(age);
  expect(all.map((a) => a.id).sort()).toEqual(expected.map((a) => a.id).sort());
  for (const a of all) {
    expect([a.id, a.ComparisonOperator, a.TreatMissingData]).toEqual([
      a.id,
      'GreaterThanThreshold',
      'notBreaching',
    ]);
    expect(a.AlarmName.startsWith(`tfguard-${stage}-`)).toBe(true);
  }
  expect(new Set(all.map((a) => a.AlarmName)).size).toBe(all.length);
  return all;
}

test("alarms on every dead-letter queue, every function's errors and throttles, the audit queue age", () => {
  const all = expectAlarms(template, 'test');
  expect(all).toHaveLength(6 * 2 + 3 + 1);
  // No topic given: the alarms exist, without actions.
  for (const a of all) expect([a.id, a.AlarmActions, a.OKActions]).toEqual([a.id, undefined, undefined]);
});

function expectConcurrencyAndThrottling(
  t: Template,
  expected: { reserved: number; audit: number; rate: number; burst: number; scanRate: number },
): void {
  const reserved = Object.fromEntries(
    ofType('AWS::Lambda::Function', t)
      .filter(([, f]) => f.Properties.ReservedConcurrentExecutions !== undefined)
      .map(([id, f]) => [id, Number(f.Properties.ReservedConcurrentExecutions)]),
  );
  expect(reserved).toEqual({ CreateScanLambdaFunction: expected.reserved });
  const mapping = ofType('AWS::Lambda::EventSourceMapping', t)[0]![1].Properties as {
    ScalingConfig: { MaximumConcurrency: number };
  };
  expect(Number(mapping.ScalingConfig.MaximumConcurrency)).toBe(expected.audit);
  const stages = ofType('AWS::ApiGatewayV2::Stage', t);
  expect(stages).toHaveLength(1);
  const [, stage] = stages[0]!;
  const p = stage.Properties as {
    DefaultRouteSettings: Record<string, unknown>;
    RouteSettings: Record<string, Record<string, unknown>>;
  };
  expect(p.DefaultRouteSettings.DetailedMetricsEnabled).toBe(false);
  expect([
    Number(p.DefaultRouteSettings.ThrottlingRateLimit),
    Number(p.DefaultRouteSettings.ThrottlingBurstLimit),
  ]).toEqual([expected.rate, expected.burst]);
  // POST /scans: a burst of the function's reserved concurrency, its own rate; the route exists
  // and the stage waits for it.
  const routes = Object.fromEntries(
    ofType('AWS::ApiGatewayV2::Route', t).map(([id, r]) => [r.Properties.RouteKey as string, id]),
  );
  expect(Object.keys(p.RouteSettings)).toEqual(['POST /scans']);
  const scans = p.RouteSettings['POST /scans']!;
  expect([Number(scans.ThrottlingRateLimit), Number(scans.ThrottlingBurstLimit)]).toEqual([
    expected.scanRate,
    expected.reserved,
  ]);
  expect(([] as unknown[]).concat(stage.DependsOn)).toContain(routes['POST /scans']);
}

test('createScan has a reserved concurrency, the audit queue a maximum concurrency, the API throttles', () => {
  expectConcurrencyAndThrottling(template, { reserved: 10, audit: 5, rate: 20, burst: 40, scanRate: 5 });
});

describe('with every wiring parameter set', () => {
  const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:tfguard-alarms';
  const ACCESS_POLICY = JSON.stringify({
    callers: [
      { principal: 'arn:aws:sts::123456789012:assumed-role/tfguard-acme/*', repositories: ['acme/*'] },
    ],
    auditors: ['arn:aws:sts::123456789012:assumed-role/security-audit/*'],
  });
  let dir: string;
  let t: Template;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tfguard-package-params-'));
    ({ update: t } = await packageService(dir, {
      alarmTopicArn: TOPIC,
      uploadRetentionDays: '7',
      reportRetentionDays: '30',
      remoteModuleCacheDays: '2',
      apiReservedConcurrency: '3',
      auditMaxConcurrency: '2',
      apiThrottleRateLimit: '12.5',
      apiThrottleBurstLimit: '25',
      scanThrottleRateLimit: '1',
      accessPolicy: ACCESS_POLICY,
    }));
  }, 180_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('every alarm notifies the topic when in alarm and when back to OK', () => {
    const all = expectAlarms(t, 'test');
    for (const a of all) expect([a.id, a.AlarmActions, a.OKActions]).toEqual([a.id, [TOPIC], [TOPIC]]);
  });

  test('every function gets the access policy, as given', () => {
    const functions = Object.entries(t.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    expect(functions.length).toBe(6);
    for (const [id, r] of functions) {
      const vars = (r.Properties as { Environment: { Variables: Record<string, string> } }).Environment
        .Variables;
      expect([id, vars.TFGUARD_ACCESS_POLICY]).toEqual([id, ACCESS_POLICY]);
    }
  });

  test('retention, concurrency and throttling follow the parameters', () => {
    expectUploadRetention(t, 7);
    expectReportRetention(t, 30, 2);
    expectConcurrencyAndThrottling(t, { reserved: 3, audit: 2, rate: 12.5, burst: 25, scanRate: 1 });
  });
});

// ---------------------------------------------------------------------------------------------
// The zips
// ---------------------------------------------------------------------------------------------

function unzip(zip: string, into: string): Promise<string[]> {
  return new Promise((resolvePromise, reject) => {
    const names: string[] = [];
    yauzl.open(zip, { lazyEntries: true }, (err, file) => {
      if (err || !file) return reject(err);
      file.on('entry', (entry: yauzl.Entry) => {
        names.push(entry.fileName);
        if (entry.fileName.endsWith('/')) return file.readEntry();
        file.openReadStream(entry, async (e, stream) => {
          if (e || !stream) return reject(e);
          const target = join(into, entry.fileName);
          await mkdir(dirname(target), { recursive: true });
          stream.pipe(createWriteStream(target)).on('finish', () => file.readEntry());
        });
      });
      file.on('end', () => resolvePromise(names));
      file.on('error', reject);
      file.readEntry();
    });
  });
}

const HCL2JSON_FILES = [
  'node_modules/@cdktf/hcl2json/package.json',
  'node_modules/@cdktf/hcl2json/lib/index.js',
  'node_modules/@cdktf/hcl2json/lib/bridge.js',
  'node_modules/@cdktf/hcl2json/wasm/bridge_wasm_exec.js',
  'node_modules/@cdktf/hcl2json/wasm/wasm_exec.js',
  'node_modules/@cdktf/hcl2json/main.wasm.gz',
  'node_modules/fs-extra/lib/index.js',
  'node_modules/graceful-fs/graceful-fs.js',
  'node_modules/jsonfile/index.js',
  'node_modules/universalify/index.js',
];

describe('packaged functions', () => {
  let server: RunningS3rver;
  beforeAll(async () => {
    server = await startS3rver([UPLOADS_BUCKET, REPORTS_BUCKET]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('every zip holds its bundle and hcl2json with its runtime dependencies, nothing else', async () => {
    for (const [name, file] of [
      ['scanUpload', 'upload-scan'],
      ['createScan', 'api'],
      ['createUpload', 'api'],
      ['getScan', 'api'],
      ['auditStart', 'audit-start'],
      ['auditWorker', 'audit-worker'],
    ]) {
      const dir = await mkdtemp(join(tmpdir(), `tfguard-zip-${name}-`));
      try {
        const names = await unzip(join(out, `${name}.zip`), dir);
        expect(names).toContain(`handlers/${file}.js`);
        for (const f of HCL2JSON_FILES) expect(names).toContain(f);
        const packages = new Set(
          names
            .filter((n) => n.startsWith('node_modules/'))
            .map((n) =>
              n
                .split('/')
                .slice(1, n.startsWith('node_modules/@') ? 3 : 2)
                .join('/'),
            ),
        );
        expect([...packages].sort()).toEqual([
          '@cdktf/hcl2json',
          'fs-extra',
          'graceful-fs',
          'jsonfile',
          'universalify',
        ]);
        expect(names.filter((n) => !n.startsWith('node_modules/')).sort()).toEqual([
          `handlers/${file}.js`,
          `handlers/${file}.js.map`,
        ]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  });

  /** Runs the packaged createScan from its unzipped directory on `event`, with `env` added. */
  async function runPackagedCreateScan(
    event: unknown,
    env: Record<string, string>,
  ): Promise<{
    status: number;
    verdict: string;
    findings: { ruleId: string; message: string }[];
    modules: number;
  }> {
    const dir = await mkdtemp(join(tmpdir(), 'tfguard-zip-run-'));
    try {
      await unzip(join(out, 'createScan.zip'), dir);
      const eventFile = join(dir, 'event.json');
      await writeFile(eventFile, JSON.stringify(event));
      const script = `
        const event = JSON.parse(require('fs').readFileSync(${JSON.stringify(eventFile)}, 'utf8'));
        require('./handlers/api.js').createScan(event).then((r) => {
          const body = JSON.parse(r.body);
          process.stdout.write(JSON.stringify({ status: r.statusCode, verdict: body.verdict, findings: body.report && body.report.findings, modules: body.report && body.report.summary.modules }));
          process.exit(0);
        }, (e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });
      `;
      const { stdout } = await run(process.execPath, ['-e', script], {
        cwd: dir,
        timeout: 60_000,
        env: {
          PATH: process.env.PATH,
          ...lambdaEnv(server.endpoint, {
            // Resolution must not reach the repository's node_modules.
            NODE_PATH: '',
            ...env,
          }),
        },
      });
      return JSON.parse(stdout) as Awaited<ReturnType<typeof runPackagedCreateScan>>;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  test('the packaged createScan runs from its unzipped directory and scans the sample archive', async () => {
    const event: unknown = JSON.parse(await readFile(join(REPO, 'events', 'http-post-scans.json'), 'utf8'));
    // No registry is reachable here (the default is on in Lambda).
    const result = await runPackagedCreateScan(event, { TFGUARD_SCAN_REGISTRY: 'false' });
    expect(result).toMatchObject({ status: 200, verdict: 'fail', modules: 2 });
    expect(result.findings.length).toBeGreaterThan(0);
  });

  test('the packaged createScan checks a lock file against a signed registry (openpgp.js loads inside the bundle)', async () => {
    const host = 'registry.example.test';
    const reg = await startRegistry({
      signingKey: await generateTestKey('Bundle Registry'),
      releases: [{ namespace: 'acme', type: 'cloud', version: '1.0.0', platforms: ['linux_amd64'] }],
    });
    try {
      const published = reg.zh('acme', 'cloud', '1.0.0').linux_amd64 as string;
      const foreign = `zh:${'0'.repeat(64)}`;
      const archive = await makeTarGz({
        'main.tf': `terraform {\n  required_version = ">= 1.5"\n  required_providers {\n    cloud = {\n      source  = "${host}/acme/cloud"\n      version = "~> 1.0"\n    }\n  }\n}\n`,
        '.terraform.lock.hcl': lockText([
          {
            source: `${host}/acme/cloud`,
            version: '1.0.0',
            constraints: '~> 1.0',
            hashes: [published, foreign],
          },
        ]),
      });
      const event = JSON.parse(await readFile(join(REPO, 'events', 'http-post-scans.json'), 'utf8')) as {
        body: string;
      };
      event.body = archive.toString('base64');
      const result = await runPackagedCreateScan(event, {
        TFGUARD_SCAN_REGISTRY: 'true',
        TFGUARD_REGISTRY_HOSTS: JSON.stringify({ [host]: reg.url }),
      });
      expect(result.status).toBe(200);
      // The SHA256SUMS signature verified (no "could not check" notice), so the foreign hash is
      // named, and the published one is not.
      const registryFindings = result.findings
        .filter((f) => f.ruleId.startsWith('lock-registry') || f.ruleId === 'lock-hash-unknown')
        .map((f) => [f.ruleId, f.message.split(' ')[0]]);
      expect(registryFindings).toEqual([['lock-hash-unknown', foreign]]);
      expect(reg.requests.some((r) => r.endsWith('SHA256SUMS.sig'))).toBe(true);
    } finally {
      await reg.close();
    }
  });
});

test("the README's bundle size is what osls package builds (the upload handler's zip, within 3%)", async () => {
  const readme = await readFile(join(REPO, 'README.md'), 'utf8');
  const stated = /Bundled upload handler: ([0-9.]+) MB zipped as `npm run package` builds it/.exec(readme);
  expect(stated).not.toBeNull();
  const { size } = await stat(join(out, 'scanUpload.zip'));
  const mb = size / 1e6;
  expect(Math.abs(mb - Number(stated![1])) / mb).toBeLessThan(0.03);
});
