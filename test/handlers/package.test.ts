/**
 * `osls package` (offline) builds the CloudFormation template and the function zips; this checks
 * the template (every function and event, the IAM statements' resources, bucket encryption, DLQs)
 * and runs a packaged function from its zip against s3rver, which proves the bundle and the
 * unbundled @cdktf/hcl2json (WebAssembly in worker threads) work together.
 */
import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import * as yauzl from 'yauzl';
import { makeTarGz } from '../helpers/archive';
import { generateTestKey, startRegistry } from '../helpers/registry-server';
import { startS3rver, type RunningS3rver } from '../helpers/s3rver';
import { lockText } from '../lockfile/fixtures';

const run = promisify(execFile);
const REPO = resolve(__dirname, '..', '..');
let out: string;
let template: {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown>; DependsOn?: unknown }>;
};

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'tfguard-package-'));
  await run(
    process.execPath,
    [
      join(REPO, 'node_modules', 'osls', 'bin', 'serverless.js'),
      'package',
      '--stage',
      'test',
      '--package',
      out,
    ],
    {
      cwd: REPO,
      timeout: 150_000,
      env: { ...process.env, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off' },
    },
  );
  template = JSON.parse(await readFile(join(out, 'cloudformation-template-update-stack.json'), 'utf8'));
}, 180_000);

afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: unknown };
const ofType = (type: string): Array<[string, Resource]> =>
  Object.entries(template.Resources).filter(([, r]) => r.Type === type);
const res = (id: string): Resource => {
  const r = template.Resources[id];
  if (r === undefined) throw new Error(`no resource ${id}`);
  return r;
};

/** CloudFormation values as text: `{ "Fn::GetAtt": ["X", "Arn"] }` → `X.Arn`, `Fn::Sub` → its string. */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (Array.isArray(v['Fn::GetAtt'])) return `${(v['Fn::GetAtt'] as string[]).join('.')}`;
  if (typeof v['Fn::Sub'] === 'string') return v['Fn::Sub'];
  if (typeof v.Ref === 'string') return `Ref:${v.Ref}`;
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
    's3:GetObject': [`${REPORTS}/reports/cache/*`],
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
    's3:GetObject': [`${REPORTS}/reports/audits/*`],
    's3:ListBucket': ['ReportsBucket.Arn'],
    's3:PutObject': [`${REPORTS}/reports/audits/*`],
    'sqs:SendMessage': ['AuditQueue.Arn', 'AuditStartDeadLetterQueue.Arn'],
  });
  const worker = grants('AuditWorkerRole');
  expect(worker['s3:PutObject']).toEqual([
    `${REPORTS}/reports/audits/*`,
    `${REPORTS}/reports/cache/*`,
    `${REPORTS}/reports/scans/*`,
  ]);
  expect(worker['s3:GetObjectVersion']).toEqual([`${UPLOADS}/uploads/*`]);
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

test('buckets are encrypted, private and TLS-only', () => {
  for (const id of ['S3BucketUploads', 'ReportsBucket']) {
    const p = res(id).Properties as Record<string, unknown>;
    expect(p.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [
        { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' }, BucketKeyEnabled: true },
      ],
    });
    expect(p.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(p.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
  }
  expect(
    (res('S3BucketUploads').Properties as { VersioningConfiguration: unknown }).VersioningConfiguration,
  ).toEqual({ Status: 'Enabled' });
  const policies = ofType('AWS::S3::BucketPolicy')
    .filter(([id]) => id !== 'ServerlessDeploymentBucketPolicy')
    .map(
      ([, p]) => p.Properties as { PolicyDocument: { Statement: { Effect: string; Condition: unknown }[] } },
    );
  expect(policies).toHaveLength(2);
  for (const p of policies) {
    expect(p.PolicyDocument.Statement[0]).toMatchObject({
      Effect: 'Deny',
      Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    });
  }
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
    server = await startS3rver(['tfguard-uploads-local', 'tfguard-reports-local']);
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
          TFGUARD_UPLOADS_BUCKET: 'tfguard-uploads-local',
          TFGUARD_REPORTS_BUCKET: 'tfguard-reports-local',
          TFGUARD_S3_ENDPOINT: server.endpoint,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'S3RVER',
          AWS_SECRET_ACCESS_KEY: 'S3RVER',
          POWERTOOLS_LOG_LEVEL: 'SILENT',
          POWERTOOLS_METRICS_DISABLED: 'true',
          // Resolution must not reach the repository's node_modules.
          NODE_PATH: '',
          ...env,
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
