/**
 * Per-container wiring shared by the handlers: settings from the environment (through
 * src/config.ts), Powertools Logger and Metrics, and the S3 / SQS adapters. Built once per
 * container, on first use. Per invocation: the deadline derived from the Lambda context.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import {
  archiveLimits,
  environment,
  parserSettings,
  registryTokens,
  remoteModuleLimits,
  scanTimeoutMs,
  serviceStage,
} from '../src/config';
import { invocationDeadline } from '../src/service/deadline';
import { ReportLayout } from '../src/service/keys';
import { PolicyObject } from '../src/service/policy';
import type { ScanContext } from '../src/service/scans';
import { loadServiceSettings, SettingsError, type ServiceSettings } from '../src/service/settings';
import { createS3Client, S3ObjectStore } from '../src/storage/s3';
import { createSqsClient, SqsMessageQueue } from '../src/storage/sqs';
import { tuneV8 } from '../src/util/v8-flags';

export interface Runtime {
  settings: ServiceSettings;
  /** `TFGUARD_STAGE`: a dimension of every metric. */
  stage: string;
  logger: Logger;
  metrics: Metrics;
  /** The uploads bucket (versioned reads, presigned PUTs). */
  uploads: S3ObjectStore;
  /** The reports bucket. */
  reports: S3ObjectStore;
  layout: ReportLayout;
  scanOptions: ScanContext['scanOptions'];
  /** `TFGUARD_POLICY_OBJECT`: the organisation's policy, kept for the container's life and read
   * again when its ETag changes; undefined when no policy is configured. */
  policy: PolicyObject | undefined;
  /** The audit fan-out queue (audit start only). */
  auditQueue(): SqsMessageQueue;
}

let cached: Runtime | undefined;

export function runtime(): Runtime {
  if (cached !== undefined) return cached;
  // Before the container's first scan (src/util/v8-flags.ts).
  tuneV8();
  const settings = loadServiceSettings(environment());
  const stage = serviceStage();
  const client = createS3Client({
    region: settings.region,
    endpoint: settings.s3.endpoint,
    forcePathStyle: settings.s3.forcePathStyle,
  });
  let queue: SqsMessageQueue | undefined;
  const logger = new Logger({ serviceName: 'tfguard' });
  // Once per container: say which kind of install this is.
  if (settings.accessPolicy === null) {
    logger.warn(
      'single-tenant install: TFGUARD_ACCESS_POLICY is not set, so every caller may scan, upload ' +
        "and read every repository's reports (docs/service.md, Tenants)",
    );
  } else {
    logger.info('access policy in force', { accessPolicy: settings.accessPolicy.source });
  }
  cached = {
    settings,
    stage,
    logger,
    // Every metric has the dimensions service and stage: stages never share a series.
    metrics: new Metrics({ namespace: 'tfguard', serviceName: 'tfguard', defaultDimensions: { stage } }),
    uploads: new S3ObjectStore({ bucket: settings.uploads.bucket, client }),
    reports: new S3ObjectStore({ bucket: settings.reports.bucket, client }),
    layout: new ReportLayout(settings.reports.prefix),
    policy:
      settings.policyObject === null
        ? undefined
        : new PolicyObject({
            store: new S3ObjectStore({ bucket: settings.policyObject.bucket, client }),
            key: settings.policyObject.key,
            name: `s3://${settings.policyObject.bucket}/${settings.policyObject.key}`,
            parser: parserSettings(),
          }),
    scanOptions: {
      parser: parserSettings(),
      limits: archiveLimits(),
      timeoutMs: scanTimeoutMs(),
      config: { registryHosts: settings.registryHosts, moduleHosts: settings.moduleHosts },
      // Remote modules are resolved in every scan unless switched off; answers are cached with the
      // registry's in the reports bucket.
      remoteModules: settings.remoteModules,
      // Per-scan request and download budget, concurrency limit, mutable-reference lifetime.
      remoteModuleSettings: remoteModuleLimits(),
      registryTokens: registryTokens(),
      remoteModulesOffReason:
        'remote module resolution is switched off in this deployment (TFGUARD_REMOTE_MODULES), and the archive has no installed copy (.terraform/modules)',
    },
    auditQueue() {
      if (settings.auditQueueUrl === undefined)
        throw new SettingsError('TFGUARD_AUDIT_QUEUE_URL is required');
      queue ??= new SqsMessageQueue({
        queueUrl: settings.auditQueueUrl,
        client: createSqsClient({ region: settings.region, endpoint: settings.sqs.endpoint }),
      });
      return queue;
    },
  };
  return cached;
}

/** Forgets the wiring (tests change the environment between cases). */
export function resetRuntime(): void {
  cached = undefined;
}

/**
 * Adds the Lambda context (request id) to every log line, hands `work` the invocation's deadline
 * (fires `TFGUARD_DEADLINE_MARGIN_MS`, at most a quarter of the time, before the Lambda timeout;
 * none without a context) and publishes metrics at the end.
 */
export async function instrumented<T>(
  rt: Runtime,
  context: Context | undefined,
  work: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  if (context !== undefined) rt.logger.addContext(context);
  const deadline = invocationDeadline(
    typeof context?.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : undefined,
    rt.settings.deadlineMarginMs,
  );
  try {
    return await work(deadline?.signal);
  } finally {
    deadline?.dispose();
    // Invocations that measured nothing (a refused request) publish nothing.
    if (rt.metrics.hasStoredMetrics()) rt.metrics.publishStoredMetrics();
  }
}
