/**
 * SQS sender for the audit fan-out. Sends in batches of 10 (the SendMessageBatch maximum), a few
 * batches at a time, and re-sends the entries SQS reports as failed (throttling) before giving up.
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { MessageQueue } from './ports';

export interface SqsClientSettings {
  region?: string | undefined;
  endpoint?: string | undefined;
}

export function createSqsClient(settings: SqsClientSettings = {}): SQSClient {
  return new SQSClient({
    ...(settings.region !== undefined ? { region: settings.region } : {}),
    ...(settings.endpoint !== undefined ? { endpoint: settings.endpoint } : {}),
  });
}

export class QueueSendError extends Error {
  override readonly name = 'QueueSendError';
  readonly failed: number;

  constructor(queueUrl: string, failed: number, detail: string, options?: { cause?: unknown }) {
    super(`could not send ${failed} message(s) to ${queueUrl}: ${detail}`, options);
    this.failed = failed;
  }
}

export interface SqsQueueOptions {
  queueUrl: string;
  client: SQSClient;
  /** Batches in flight at once (default 8). */
  concurrency?: number;
  /** Attempts for entries SQS reports as failed (default 3). */
  attempts?: number;
}

const BATCH = 10;

export class SqsMessageQueue implements MessageQueue {
  readonly queueUrl: string;
  private readonly client: SQSClient;
  private readonly concurrency: number;
  private readonly attempts: number;

  constructor(options: SqsQueueOptions) {
    this.queueUrl = options.queueUrl;
    this.client = options.client;
    this.concurrency = options.concurrency ?? 8;
    this.attempts = options.attempts ?? 3;
  }

  private async sendBatch(bodies: readonly string[]): Promise<void> {
    let pending = bodies.map((body, i) => ({ Id: String(i), MessageBody: body }));
    let lastDetail = '';
    for (let attempt = 1; attempt <= this.attempts && pending.length > 0; attempt++) {
      let result;
      try {
        result = await this.client.send(
          new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: pending }),
        );
      } catch (err) {
        throw new QueueSendError(
          this.queueUrl,
          pending.length,
          err instanceof Error ? err.message : String(err),
          {
            cause: err,
          },
        );
      }
      const failed = new Set((result.Failed ?? []).map((f) => f.Id));
      const senderFault = (result.Failed ?? []).find((f) => f.SenderFault);
      if (senderFault) {
        throw new QueueSendError(
          this.queueUrl,
          failed.size,
          `${senderFault.Code}: ${senderFault.Message ?? ''}`,
        );
      }
      lastDetail = (result.Failed ?? []).map((f) => `${f.Code}: ${f.Message ?? ''}`).join('; ');
      pending = pending.filter((entry) => failed.has(entry.Id));
      if (pending.length > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
    }
    if (pending.length > 0) throw new QueueSendError(this.queueUrl, pending.length, lastDetail);
  }

  async sendAll(bodies: readonly string[]): Promise<void> {
    const batches: string[][] = [];
    for (let i = 0; i < bodies.length; i += BATCH) batches.push(bodies.slice(i, i + BATCH));
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        await this.sendBatch(batch);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, batches.length) }, worker));
  }
}
