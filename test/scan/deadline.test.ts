/**
 * The overall per-scan deadline (`ScanOptions.timeoutMs` / `signal`, docs/security.md §4 and §8):
 * a scan either returns its report before the deadline or throws `InputError('scan-timeout')`
 * naming how long it ran and where it was; an hcl2json parse in flight is terminated, not waited
 * for. Deterministic and without wall-clock assertions: time comes from a clock the test moves
 * (test/support/clock.ts), and it is moved once the scan is inside the work the deadline must cut
 * short (a hostile file in an hcl2json worker, a registry that never answers).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { readArchiveBytes } from '../../src/archive';
import { InputError } from '../../src/errors';
import { HclParser } from '../../src/hcl';
import { Hcl2JsonPool } from '../../src/hcl/full/pool';
import { loadModules, LOADER_PROJECTION } from '../../src/modules';
import { scanBytes, sharedHclParser, shouldLoad, timeLimit, TimeLimitReached } from '../../src/scan';
import { ManualClock } from '../support/clock';
import { DEFAULT_CONFIG } from '../../src/scan/config-file';
import { makeTarGz } from '../support/archive';
import { generateTestKey, startRegistry, type RegistryServer } from '../support/registry-server';
import { lockText } from '../support/lock-fixtures';
import { slowToParse } from '../support/scan';

const SAMPLE = readFileSync(path.join(__dirname, '..', '..', 'events', 'archives', 'acme-network.tar.gz'));

const MAIN_TF = 'terraform {\n  required_version = ">= 1.5"\n}\n';

/**
 * 3 MB of resources ending in an unterminated string: the verifier gives up, so hcl2json parses the
 * whole file in a worker (seconds, even in a warm worker; the default per-file budget is ~25 s).
 */
function hostileFile(): string {
  return slowToParse(MAIN_TF, 3_000_000);
}

/** Waits (on real time, without asserting any) until `condition` holds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 10));
}

async function rejection(work: Promise<unknown>): Promise<InputError> {
  const err = await work.then(
    () => {
      throw new Error('the scan returned a report; a scan-timeout was expected');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InputError);
  expect((err as InputError).code).toBe('scan-timeout');
  return err as InputError;
}

test('an already aborted signal: scan-timeout before anything is read, with the signal reason', async () => {
  const controller = new AbortController();
  controller.abort(new Error('the operator cancelled the scan'));
  const err = await rejection(
    scanBytes('sample.tar.gz', SAMPLE, { signal: controller.signal, clock: new ManualClock() }),
  );
  expect(err.message).toBe('scan timed out after 0 ms while starting: the operator cancelled the scan');
  expect(err.entry).toBeUndefined();
});

test('a time limit that passed while timers could not run still stops the scan (the clock is checked)', async () => {
  const clock = new ManualClock();
  const limit = timeLimit(20, 'the test limit of 20 ms', clock);
  clock.jump(60); // busy: the limit's timer cannot fire, so its signal is not aborted yet
  expect(limit.signal.aborted).toBe(false);
  const err = await rejection(scanBytes('sample.tar.gz', SAMPLE, { signal: limit.signal, clock }));
  expect(err.message).toBe('scan timed out after 0 ms while starting: the test limit of 20 ms');
  expect(limit.signal.reason).toBeInstanceOf(TimeLimitReached);
  limit.dispose();
});

test('a generous deadline changes nothing: the same report as without one', async () => {
  const without = await scanBytes('sample.tar.gz', SAMPLE);
  const controller = new AbortController();
  const withDeadline = await scanBytes('sample.tar.gz', SAMPLE, {
    timeoutMs: 120_000,
    signal: controller.signal,
  });
  expect(JSON.stringify(withDeadline)).toBe(JSON.stringify(without));
});

test('invalid timeoutMs is a RangeError', async () => {
  await expect(scanBytes('sample.tar.gz', SAMPLE, { timeoutMs: 0 })).rejects.toThrow(RangeError);
  await expect(scanBytes('sample.tar.gz', SAMPLE, { timeoutMs: Number.NaN })).rejects.toThrow(
    /timeoutMs must be a positive number/,
  );
});

test('timeoutMs over a file hcl2json needs seconds for: scan-timeout naming the file, the parse terminated', async () => {
  const archive = await makeTarGz({ 'main.tf': MAIN_TF, 'slow/main.tf': hostileFile() });
  const parser = sharedHclParser();
  const clock = new ManualClock();
  const scan = rejection(scanBytes('slow.tar.gz', archive, { timeoutMs: 1000, clock }));
  // Once the hostile file is in a worker, the limit's second passes.
  await until(() => parser.busyWorkers > 0);
  clock.advance(1000);
  const err = await scan;
  expect(err.message).toBe(
    'scan timed out after 1.0 s while parsing "slow/main.tf": the scan time limit is 1.0 s',
  );
  expect(err.entry).toBe('slow/main.tf');
  // Stopped at the limit, not after the parse: its worker was terminated.
  expect(parser.busyWorkers).toBe(0);
  // The terminated worker was replaced: the same archive scans completely without the limit, and
  // the syntax error is reported from hcl2json's full parse.
  const report = await scanBytes('slow.tar.gz', archive);
  expect(report.findings.filter((f) => f.ruleId === 'parse-error').map((f) => f.file)).toEqual([
    'slow/main.tf',
  ]);
}, 60_000);

test('an hcl2json parse in flight is terminated when its signal fires; a later parse gets a new worker', async () => {
  const pool = new Hcl2JsonPool({ size: 1, hcl2jsonPath: require.resolve('@cdktf/hcl2json') });
  try {
    const text = hostileFile();
    const controller = new AbortController();
    const queuedController = new AbortController();
    // A started worker takes the long parse at once (a worker still starting up would hold it in
    // the queue, and aborting it there proves nothing about termination).
    expect(await pool.run('warm.tf', 'a = 1\n', 120_000)).toEqual({ kind: 'ok', json: { a: 1 } });
    const running = pool.run('main.tf', text, 120_000, controller.signal);
    const queued = pool.run('other.tf', 'a = 1\n', 120_000, queuedController.signal);
    expect([pool.workerCount, pool.busyCount]).toEqual([1, 1]);
    queuedController.abort();
    controller.abort();
    expect(await queued).toEqual({ kind: 'aborted' });
    expect(await running).toEqual({ kind: 'aborted' });
    expect(pool.workerCount).toBe(0); // terminated, not left running
    // An already aborted signal never reaches a worker.
    expect(await pool.run('x.tf', 'a = 1\n', 10_000, controller.signal)).toEqual({ kind: 'aborted' });
    expect(pool.workerCount).toBe(0);
    expect(await pool.run('x.tf', 'a = 1\n', 30_000)).toEqual({ kind: 'ok', json: { a: 1 } });
  } finally {
    await pool.close();
  }
}, 60_000);

test('the module loader stops between files and rethrows instead of recording a parse error', async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 20; i++) files[`m${String(i).padStart(2, '0')}/main.tf`] = MAIN_TF;
  const archive = await readArchiveBytes('many.tar.gz', await makeTarGz(files), { shouldLoad });
  const parser = new HclParser();
  try {
    const controller = new AbortController();
    const read: string[] = [];
    const reason = new Error('stop after the first file');
    const loading = loadModules({
      archive,
      config: DEFAULT_CONFIG,
      parser,
      signal: controller.signal,
      readConfigFile: async (file, content) => {
        read.push(file);
        const result = await parser.extract(file, content, LOADER_PROJECTION);
        controller.abort(reason);
        return result;
      },
    });
    await expect(loading).rejects.toBe(reason);
    // The loader reads up to 8 files at once: those already started finish, no new one starts.
    expect(read.length).toBeGreaterThanOrEqual(1);
    expect(read.length).toBeLessThanOrEqual(8);
  } finally {
    await parser.close();
  }
});

describe('a registry that never answers', () => {
  const HOST = 'registry.example.test';
  const SOURCE = `${HOST}/acme/cloud`;
  let reg: RegistryServer;

  beforeAll(async () => {
    reg = await startRegistry({
      signingKey: await generateTestKey('Deadline Registry'),
      releases: [{ namespace: 'acme', type: 'cloud', version: '1.0.0', platforms: ['linux_amd64'] }],
    });
    reg.faults.push({ path: /.*/, kind: 'hang' });
  });
  afterAll(async () => {
    await reg?.close();
  });

  async function lockedArchive(): Promise<Buffer> {
    const zh = reg.zh('acme', 'cloud', '1.0.0').linux_amd64 as string;
    return makeTarGz({
      'main.tf': `terraform {\n  required_version = ">= 1.5"\n  required_providers {\n    cloud = {\n      source  = "${SOURCE}"\n      version = "~> 1.0"\n    }\n  }\n}\n`,
      '.terraform.lock.hcl': lockText([
        { source: SOURCE, version: '1.0.0', constraints: '~> 1.0', hashes: [zh] },
      ]),
    });
  }

  test('with a known deadline the registry check gets a budget inside it: a complete report with the notice (the client alone waits ~31 s)', async () => {
    const archive = await lockedArchive();
    const requestsBefore = reg.requests.length;
    const clock = new ManualClock();
    const scan = scanBytes('registry.tar.gz', archive, {
      registry: true,
      config: { registryHosts: { [HOST]: reg.url } },
      timeoutMs: 2500,
      clock,
    });
    // The registry is being asked (and never answers): the budget's 1.5 s pass, the scan's do not.
    await until(() => reg.requests.length > requestsBefore);
    clock.advance(1500);
    const report = await scan;
    const notices = report.findings.filter((f) => f.ruleId === 'lock-registry-unavailable');
    expect(notices.map((f) => [f.file, f.line, f.severity])).toEqual([['.terraform.lock.hcl', 4, 'notice']]);
    expect(notices[0]!.message).toMatch(
      /the registry check's time budget of 1\.5 s ran out \(the scan's deadline left 2\.5 s, 1\.0 s of it kept for the rules and the report\)$/,
    );
  }, 30_000);

  test('a deadline of unknown time (a plain signal) still bounds the lock-file stage: scan-timeout', async () => {
    const archive = await lockedArchive();
    const requestsBefore = reg.requests.length;
    const controller = new AbortController();
    const clock = new ManualClock();
    const scan = rejection(
      scanBytes('registry.tar.gz', archive, {
        registry: true,
        config: { registryHosts: { [HOST]: reg.url } },
        signal: controller.signal,
        clock,
      }),
    );
    await until(() => reg.requests.length > requestsBefore);
    clock.jump(1500);
    controller.abort(new Error('the caller gave up'));
    const err = await scan;
    expect(err.message).toBe(
      'scan timed out after 1.5 s while checking the lock files (with the registry): the caller gave up',
    );
  }, 30_000);
});
