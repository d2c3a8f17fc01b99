/**
 * A real browser for tests: Debian's `chromium-headless-shell` driven over the Chrome DevTools
 * Protocol on `--remote-debugging-pipe` (messages are JSON, each ended by a NUL byte; the browser
 * reads commands on fd 3 and writes answers and events on fd 4). No port, no npm dependency.
 *
 * `renderPage(file)` opens a local HTML file and returns its DOM after load (as `--dump-dom` would),
 * a PNG screenshot, every console message and uncaught exception, every CSP violation or other
 * browser log entry of level error, and every network request other than the page itself; with
 * `evaluate` it also runs expressions in the page (after load) and returns their values.
 *
 * Protocol reference: https://chromedevtools.github.io/devtools-protocol/ (Target.attachToTarget
 * with `flatten`, Page.navigate, Runtime.evaluate, Network.requestWillBeSent, Log.entryAdded,
 * Page.captureScreenshot).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { toolStatus, type Availability } from './external';

/** The headless shell's path, or why there is none (`toolStatus`, test/support/external.ts). */
export function chromiumStatus(): Availability<string> {
  return toolStatus('chromium-headless-shell');
}

export interface RenderResult {
  dom: string;
  png: Buffer;
  /** Console messages (`type: text`) and uncaught exceptions (`exception: text`). */
  console: string[];
  /** Browser log entries of level error (CSP violations, failed loads). */
  errors: string[];
  /** URLs requested other than the page itself. */
  requests: string[];
  /** The values of `evaluate`'s expressions, in order. */
  values: unknown[];
}

export interface RenderOptions {
  width?: number;
  height?: number;
  /** Capture the whole page rather than the viewport. */
  fullPage?: boolean;
  /** Capture this rectangle of the page (CSS pixels) instead. */
  clip?: { x: number; y: number; width: number; height: number };
  /** Run the page with JavaScript disabled. */
  noScript?: boolean;
  /** Expressions evaluated in the page after load (awaited when they return a promise). */
  evaluate?: string[];
  timeoutMs?: number;
}

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
  sessionId?: string;
}

class Cdp {
  private nextId = 1;
  private buffer = '';
  private readonly pending = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  readonly events: Message[] = [];
  private readonly listeners: ((m: Message) => void)[] = [];

  constructor(private readonly child: ChildProcess) {
    const out = child.stdio[4] as NodeJS.ReadableStream;
    out.setEncoding('utf8');
    out.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end: number;
      while ((end = this.buffer.indexOf('\0')) !== -1) {
        const text = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 1);
        const message = JSON.parse(text) as Message;
        if (message.id !== undefined) {
          const p = this.pending.get(message.id);
          this.pending.delete(message.id);
          if (message.error) p?.reject(new Error(`CDP: ${message.error.message}`));
          else p?.resolve(message);
        } else {
          this.events.push(message);
          for (const l of this.listeners) l(message);
        }
      }
    });
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Message> {
    const id = this.nextId++;
    const message = { id, method, params, ...(sessionId ? { sessionId } : {}) };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      (this.child.stdio[3] as NodeJS.WritableStream).write(JSON.stringify(message) + '\0');
    });
  }

  waitFor(method: string, timeoutMs: number): Promise<Message> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${method}`)), timeoutMs);
      this.listeners.push((m) => {
        if (m.method === method) {
          clearTimeout(timer);
          resolve(m);
        }
      });
    });
  }
}

/** Opens `file` in a fresh headless browser and reports what it did (see the file comment). */
export async function renderPage(file: string, options: RenderOptions = {}): Promise<RenderResult> {
  const status = chromiumStatus();
  if (!status.ok) throw new Error(status.reason);
  const profile = mkdtempSync(path.join(tmpdir(), 'tfguard-chromium-'));
  const width = options.width ?? 1280;
  const height = options.height ?? 900;
  const child = spawn(
    status.value,
    [
      '--remote-debugging-pipe',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--hide-scrollbars',
      '--mute-audio',
      `--user-data-dir=${profile}`,
      `--window-size=${width},${height}`,
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const timeoutMs = options.timeoutMs ?? 60_000;
  const cdp = new Cdp(child);
  try {
    const run = async (): Promise<RenderResult> => {
      const targets = await cdp.send('Target.getTargets');
      const infos = (targets.result?.targetInfos ?? []) as { targetId: string; type: string }[];
      let targetId = infos.find((t) => t.type === 'page')?.targetId;
      if (targetId === undefined) {
        const created = await cdp.send('Target.createTarget', { url: 'about:blank' });
        targetId = created.result?.targetId as string;
      }
      const attached = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
      const session = attached.result?.sessionId as string;
      const send = (method: string, params: Record<string, unknown> = {}) =>
        cdp.send(method, params, session);
      await send('Page.enable');
      await send('Runtime.enable');
      await send('Network.enable');
      await send('Log.enable');
      await send('Emulation.setDeviceMetricsOverride', {
        width,
        height,
        deviceScaleFactor: 1,
        mobile: false,
      });
      if (options.noScript) await send('Emulation.setScriptExecutionDisabled', { value: true });
      const pageUrl = pathToFileURL(file).href;
      const loaded = cdp.waitFor('Page.loadEventFired', timeoutMs);
      const nav = await send('Page.navigate', { url: pageUrl });
      if (nav.result?.errorText) throw new Error(`navigation failed: ${String(nav.result.errorText)}`);
      await loaded;
      const evaluate = async (expression: string): Promise<unknown> => {
        const r = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
        const ex = r.result?.exceptionDetails as
          { text?: string; exception?: { description?: string } } | undefined;
        if (ex) throw new Error(`evaluate failed: ${ex.exception?.description ?? ex.text ?? 'error'}`);
        return (r.result?.result as { value?: unknown } | undefined)?.value;
      };
      // With scripts disabled Runtime.evaluate still runs (the DevTools context is not the page's).
      const dom = (await evaluate('document.documentElement.outerHTML')) as string;
      const values: unknown[] = [];
      for (const e of options.evaluate ?? []) values.push(await evaluate(e));
      let clip: Record<string, number> | undefined = options.clip ? { ...options.clip, scale: 1 } : undefined;
      if (options.fullPage) {
        const metrics = await send('Page.getLayoutMetrics');
        const size = metrics.result?.cssContentSize as { width: number; height: number };
        clip = { x: 0, y: 0, width: Math.ceil(size.width), height: Math.ceil(size.height), scale: 1 };
      }
      const shot = await send('Page.captureScreenshot', {
        format: 'png',
        ...(clip ? { clip, captureBeyondViewport: true } : {}),
      });
      const png = Buffer.from(shot.result?.data as string, 'base64');
      const ofSession = cdp.events.filter((m) => m.sessionId === session);
      const consoleMessages = ofSession.flatMap((m) => {
        if (m.method === 'Runtime.consoleAPICalled') {
          const args = (m.params?.args ?? []) as { value?: unknown; description?: string }[];
          return [
            `${String(m.params?.type)}: ${args.map((a) => String(a.value ?? a.description)).join(' ')}`,
          ];
        }
        if (m.method === 'Runtime.exceptionThrown') {
          const d = m.params?.exceptionDetails as { text?: string; exception?: { description?: string } };
          return [`exception: ${d.exception?.description ?? d.text ?? ''}`];
        }
        return [];
      });
      const errors = ofSession.flatMap((m) => {
        if (m.method !== 'Log.entryAdded') return [];
        const entry = m.params?.entry as { level: string; text: string; source: string };
        return entry.level === 'error' ? [`${entry.source}: ${entry.text}`] : [];
      });
      const requests = ofSession.flatMap((m) => {
        if (m.method !== 'Network.requestWillBeSent') return [];
        const url = (m.params?.request as { url: string }).url;
        return url === pageUrl ? [] : [url];
      });
      return { dom, png, console: consoleMessages, errors, requests, values };
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`chromium did not finish in ${timeoutMs} ms: ${stderr.slice(-2000)}`)),
        timeoutMs,
      );
    });
    const failed = exited.then(() => {
      throw new Error(`chromium exited early: ${stderr.slice(-2000)}`);
    });
    try {
      return await Promise.race([run(), timeout, failed]);
    } finally {
      clearTimeout(timer);
      failed.catch(() => undefined);
    }
  } finally {
    let closeTimer: NodeJS.Timeout | undefined;
    await Promise.race([
      cdp.send('Browser.close').catch(() => undefined),
      exited,
      new Promise((resolve) => (closeTimer = setTimeout(resolve, 3000))),
    ]);
    clearTimeout(closeTimer);
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(killer);
    rmSync(profile, { recursive: true, force: true });
  }
}

/** Width and height of a PNG (its IHDR chunk). */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.length < 24 || png.toString('latin1', 1, 4) !== 'PNG') throw new Error('not a PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}
