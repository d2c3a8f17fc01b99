/**
 * Entry point 3b: the audit worker, an SQS consumer with partial batch failure reporting
 * (Powertools batch): a failed record is returned in `batchItemFailures` and redelivered alone.
 * Concurrency comes from Lambda running several batches at once.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { processAuditMessage } from '../src/service/audit';
import { instrumented, runtime } from './runtime';

const processor = new BatchProcessor(EventType.SQS);

export async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  const rt = runtime();
  const base = {
    reports: rt.reports,
    layout: rt.layout,
    scanOptions: rt.scanOptions,
    logger: rt.logger,
    metrics: rt.metrics,
    registry: rt.settings.auditRegistry,
    source: rt.uploads,
    maxArchiveBytes: rt.settings.maxArchiveBytes,
    policy: rt.policy,
  };
  const record = (signal: AbortSignal | undefined) => async (r: SQSRecord) => {
    const receiveCount = Number(r.attributes?.ApproximateReceiveCount ?? '1');
    const result = await processAuditMessage({ ...base, signal }, r.body, {
      receiveCount: Number.isFinite(receiveCount) ? receiveCount : 1,
      maxReceiveCount: rt.settings.auditMaxReceiveCount,
    });
    return result.status;
  };
  return instrumented(rt, context, (signal) =>
    processPartialResponse(event, record(signal), processor, {
      context,
      throwOnFullBatchFailure: false,
      // One repository at a time: a rescan is CPU-bound, parallel records would only multiply the
      // archives held in memory (and the per-record log keys would interleave).
      processInParallel: false,
    }),
  );
}
