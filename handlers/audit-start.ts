/** Entry point 3a: the scheduled audit start → plan the run and fan out (src/service/audit.ts). */
import type { Context, ScheduledEvent } from 'aws-lambda';
import { startAudit, type StartAuditResult } from '../src/service/audit';
import { instrumented, runtime } from './runtime';

export async function handler(event: ScheduledEvent, context?: Context): Promise<StartAuditResult> {
  const rt = runtime();
  return instrumented(rt, context, async () => {
    const time = new Date(event.time);
    if (Number.isNaN(time.getTime()))
      throw new Error(`scheduled event has no valid time: ${JSON.stringify(event.time)}`);
    return startAudit(
      {
        reports: rt.reports,
        layout: rt.layout,
        scanOptions: rt.scanOptions,
        logger: rt.logger,
        metrics: rt.metrics,
        registry: rt.settings.auditRegistry,
        shardSize: rt.settings.auditShardSize,
        queue: rt.auditQueue(),
      },
      { time, eventId: event.id },
    );
  });
}
