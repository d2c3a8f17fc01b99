/** Entry point 1: S3 `ObjectCreated` on the uploads prefix → scan every record (src/service/upload-scan.ts). */
import type { Context, S3Event } from 'aws-lambda';
import { processUploadEvent, type UploadOutcome } from '../src/service/upload-scan';
import { instrumented, runtime } from './runtime';

export async function handler(event: S3Event, context?: Context): Promise<{ outcomes: UploadOutcome[] }> {
  const rt = runtime();
  return instrumented(rt, context, async (signal) => {
    const outcomes = await processUploadEvent(
      {
        uploads: rt.settings.uploads,
        source: rt.uploads,
        reports: rt.reports,
        layout: rt.layout,
        scanOptions: rt.scanOptions,
        registry: rt.settings.scanRegistry,
        maxArchiveBytes: rt.settings.maxArchiveBytes,
        accessPolicy: rt.settings.accessPolicy,
        policy: rt.policy,
        logger: rt.logger,
        metrics: rt.metrics,
        signal,
      },
      event,
    );
    return { outcomes };
  });
}
