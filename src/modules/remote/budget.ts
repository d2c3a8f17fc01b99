/**
 * Bounds on what remote resolution may ask of the network: a scanned archive decides
 * which modules it calls, and a hostile package can call thousands of others (one archive with one
 * module call caused 1,743 package downloads, 524 at once). So:
 *
 * - a per-scan budget of requests (every attempt, retries included) and of package downloads
 *   (`TFGUARD_REMOTE_MAX_REQUESTS`, `TFGUARD_REMOTE_MAX_DOWNLOADS`); once spent, nothing more is
 *   asked and every module still to resolve stays unresolved, saying so (`module-unresolved`);
 * - a limit on requests in flight (`TFGUARD_REMOTE_MAX_CONCURRENCY`) shared by every resolution of
 *   the process (the CLI's scans, a Lambda container's invocations), so that concurrent scans do not
 *   multiply it.
 */
import { abortReason, HttpRequestError } from '../../util/http';
import type { RequestGate } from '../../util/http';

export interface RemoteBudgetLimits {
  /** Requests one scan's resolution may send (default 1,000). */
  maxRequests: number;
  /** Packages one scan's resolution may download (default 200). */
  maxDownloads: number;
  /** Requests in flight at once, over the whole process (default 8). */
  maxConcurrent: number;
}

export const DEFAULT_REMOTE_BUDGET: Readonly<RemoteBudgetLimits> = Object.freeze({
  maxRequests: 1000,
  maxDownloads: 200,
  maxConcurrent: 8,
});

/** How long a package behind a branch, tag or unchecksummed URL is reused from the cache
 * (`TFGUARD_REMOTE_MUTABLE_TTL_SECONDS`). */
export const DEFAULT_MUTABLE_TTL_MS = 10 * 60 * 1000;

/** A counting semaphore: at most `size` holders; waiters are served in order. */
export class Slots {
  private held = 0;
  private readonly waiting: (() => void)[] = [];
  /** The most holders there ever were at once (tests, the benchmark). */
  peak = 0;

  constructor(readonly size: number) {}

  /** Waits for a slot (or rejects when `signal` fires first); resolves to its release. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    const grant = (): (() => void) => {
      this.held++;
      this.peak = Math.max(this.peak, this.held);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        this.held--;
        this.waiting.shift()?.();
      };
    };
    if (this.held < this.size && this.waiting.length === 0) return Promise.resolve(grant());
    return new Promise((resolve, reject) => {
      const wake = (): void => {
        signal?.removeEventListener('abort', abort);
        resolve(grant());
      };
      const abort = (): void => {
        const i = this.waiting.indexOf(wake);
        if (i !== -1) this.waiting.splice(i, 1);
        reject(new Error(signal !== undefined ? abortReason(signal) : 'aborted'));
      };
      if (signal?.aborted) return abort();
      signal?.addEventListener('abort', abort, { once: true });
      this.waiting.push(wake);
    });
  }
}

/** The process-wide slots of each concurrency limit (one limit in practice: the operator's). */
const shared = new Map<number, Slots>();

export function processSlots(size: number): Slots {
  let slots = shared.get(size);
  if (slots === undefined) {
    slots = new Slots(size);
    shared.set(size, slots);
  }
  return slots;
}

/** One scan's budget: counts its requests and downloads and holds each request to the slots. */
export class RemoteBudget implements RequestGate {
  requests = 0;
  downloads = 0;

  constructor(
    readonly limits: RemoteBudgetLimits,
    private readonly slots: Slots = processSlots(limits.maxConcurrent),
    private readonly signal?: AbortSignal,
  ) {}

  async enter(what: string, url: URL): Promise<() => void> {
    if (this.requests >= this.limits.maxRequests) {
      throw new HttpRequestError(
        'unavailable',
        `${what}: ${url.href} was not requested: the scan's budget of ${this.limits.maxRequests} requests for remote modules is spent (TFGUARD_REMOTE_MAX_REQUESTS)`,
      );
    }
    this.requests++;
    try {
      return await this.slots.acquire(this.signal);
    } catch (err) {
      throw new HttpRequestError('unavailable', `${what}: ${url.href}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** Counts one package download, or throws once the budget is spent. */
  download(what: string): void {
    if (this.downloads >= this.limits.maxDownloads) {
      throw new HttpRequestError(
        'unavailable',
        `${what} was not downloaded: the scan's budget of ${this.limits.maxDownloads} package downloads for remote modules is spent (TFGUARD_REMOTE_MAX_DOWNLOADS)`,
      );
    }
    this.downloads++;
  }
}
