/**
 * Load and fault soak of the service against s3rver on 127.0.0.1 (issue 11; docs/performance.md
 * "Service soak"):
 *
 *   npm run soak -- [--seconds 420] [--archives 300] [--concurrency 1,8,32] [--seed N]
 *                   [--no-fault] [--no-corpus] [--no-conditional-writes] [--no-tenants]
 *                   [--write-docs] [--json FILE]
 *
 * One round per concurrency, each in a fresh child process (its own heap, so the peak RSS is the
 * round's) with its own s3rver: `--archives` archives (~5 % hostile: path traversal, decompression
 * bomb, corrupt gzip, symlink outside, oversize; a few repositories with many uploads each; two
 * corpus archives when the corpus is there), delivered to the real upload-scan handler (and 5 % to
 * `POST /scans`) at that concurrency, with duplicate deliveries, then checked
 * (scripts/soak/invariants.ts). Then, if the time left allows, a fault round at concurrency 8 in
 * which s3rver is killed (SIGKILL) a third of the way through and started again 3 s later.
 *
 * Mixed callers (the default): every round runs under an access policy (`TFGUARD_ACCESS_POLICY`,
 * docs/service.md "Tenants") of three principals, two CI roles (uploads and `POST /scans`) and a
 * pipeline writing straight into the uploads bucket, each allowed some of the repositories; each
 * archive is delivered by one of them, 15 % by one not allowed on its repository (refused: recorded
 * as `repository-not-allowed`, `@latest` unmoved), and each allowed `POST /scans` archive is sent
 * once more by a caller not allowed on it (a takeover of its scan id). `--no-tenants`: a
 * single-tenant install (no policy, every delivery allowed), as before policies existed.
 *
 * Prints archives/s, p50/p95/p99 latency per archive and peak RSS per round; `--write-docs`
 * writes the table into docs/performance.md. Exit 1 when an invariant is violated (or the time cap
 * cut a round short), 2 on bad usage. `--no-conditional-writes` leaves out the proxy that gives
 * s3rver S3's conditional writes, so the `latest` pointer update degrades to a plain
 * read-then-write: a real run in which the checker should find stale pointers. Rounds stop starting deliveries at `--seconds`; a round's
 * process that is still running a minute later is killed.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { closeSharedParser } from '../src/scan';
import { corpusFile, corpusStatus } from '../test/support/external';
import { runRound, type RoundOptions, type RoundResult } from './soak/round';

const REPO_ROOT = path.resolve(__dirname, '..');
const DOCS = path.join(REPO_ROOT, 'docs', 'performance.md');
const START = '<!-- soak:start -->';
const END = '<!-- soak:end -->';
const CORPUS = [
  'cloudposse_terraform-aws-components.tar.gz',
  'terraform-aws-modules_terraform-aws-vpc.tar.gz',
];
const FAULT_CONCURRENCY = 8;
const FAULT_DOWN_MS = 3000;
const GRACE_MS = 60_000;

interface Options {
  seconds: number;
  archives: number;
  concurrency: number[];
  seed: number;
  fault: boolean;
  corpus: boolean;
  writeDocs: boolean;
  conditionalWrites: boolean;
  tenants: boolean;
  json: string | null;
}

/** Share of the archives delivered by a caller not allowed on their repository (mixed callers). */
const FOREIGN_SHARE = 0.15;

function usage(message: string): never {
  process.stderr.write(
    `${message}\nusage: npm run soak -- [--seconds N] [--archives N] [--concurrency 1,8,32] [--seed N] ` +
      `[--no-fault] [--no-corpus] [--no-conditional-writes] [--no-tenants] [--write-docs] [--json FILE]\n`,
  );
  process.exit(2);
}

function parseOptions(argv: string[]): Options {
  const options: Options = {
    seconds: 420,
    archives: 300,
    concurrency: [1, 8, 32],
    seed: Math.floor(Math.random() * 0x7fffffff),
    fault: true,
    corpus: true,
    writeDocs: false,
    conditionalWrites: true,
    tenants: true,
    json: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[i + 1];
    const integer = (min: number): number => {
      const n = Number(value);
      if (value === undefined || !Number.isInteger(n) || n < min) usage(`${flag} needs an integer >= ${min}`);
      i++;
      return n;
    };
    const positive = () => integer(1);
    switch (flag) {
      case '--seconds':
        options.seconds = positive();
        break;
      case '--archives':
        options.archives = positive();
        break;
      case '--seed':
        options.seed = integer(0);
        break;
      case '--concurrency': {
        const list = (value ?? '').split(',').map(Number);
        if (value === undefined || list.some((n) => !Number.isInteger(n) || n < 1))
          usage('--concurrency needs positive integers separated by commas');
        options.concurrency = list;
        i++;
        break;
      }
      case '--no-fault':
        options.fault = false;
        break;
      case '--no-corpus':
        options.corpus = false;
        break;
      case '--no-conditional-writes':
        options.conditionalWrites = false;
        break;
      case '--no-tenants':
        options.tenants = false;
        break;
      case '--write-docs':
        options.writeDocs = true;
        break;
      case '--json':
        if (value === undefined) usage('--json needs a file');
        options.json = value;
        i++;
        break;
      default:
        usage(`unknown option ${flag}`);
    }
  }
  return options;
}

/** The round options shared by the CLI's rounds. */
export function soakRound(
  label: string,
  concurrency: number,
  options: Pick<Options, 'archives' | 'seed' | 'conditionalWrites' | 'tenants'> & {
    corpus: string[];
    deadline: number;
  },
): RoundOptions {
  return {
    label,
    archives: options.archives,
    concurrency,
    // A few repositories with many uploads each: ~15 builds per repository at 300 archives.
    repositories: Math.max(1, Math.round(options.archives / 15)),
    hostileShare: 0.05,
    apiShare: 0.05,
    duplicateShare: 0.1,
    redeliver: Math.min(40, Math.ceil(options.archives / 5)),
    corpus: options.corpus,
    seed: options.seed,
    maxArchiveBytes: 2 * 1024 * 1024,
    retryDelaysMs: [4000, 8000],
    deadline: options.deadline,
    conditionalWrites: options.conditionalWrites,
    tenants: options.tenants ? { foreignShare: FOREIGN_SHARE } : undefined,
  };
}

/** Runs a round in a child process (fresh heap: the peak RSS is the round's). */
function roundInChild(round: RoundOptions, killAt: number): Promise<RoundResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...process.execArgv, __filename, '--child', JSON.stringify(round)],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), Math.max(0, killAt - Date.now()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').pop() ?? '';
      if (code === 0 && last.startsWith('{')) resolve(JSON.parse(last) as RoundResult);
      else reject(new Error(`round ${round.label} ended with ${signal ?? `exit code ${code}`}`));
    });
  });
}

/** The mixed callers of a round, in words. */
function callersLine(r: RoundResult): string {
  const t = r.tenants!;
  return (
    `${t.callers} callers; ${t.refusedDeliveries} of ${r.deliveries} + ${r.redelivered} deliveries refused ` +
    `(${t.foreignArchives} archives by a caller not allowed on their repository, ${t.takeovers} takeover attempts on allowed POST /scans); ` +
    `stored ${t.stored.reports} reports and ${t.stored.rejections} rejections of allowed archives, ` +
    `${t.stored.refusals} refused uploads recorded`
  );
}

const f1 = (n: number) => n.toFixed(1);
const f0 = (n: number) => n.toFixed(0);

export function table(results: readonly RoundResult[]): string {
  const rows = results.map((r) =>
    [
      r.fault ? `${r.concurrency}, s3rver killed` : String(r.concurrency),
      `${r.archives} (${r.hostile} hostile, ${r.api} API, ${r.corpus} corpus${r.tenants !== null ? `, ${r.tenants.foreignArchives} by a caller not allowed` : ''})`,
      `${r.deliveries} + ${r.redelivered}`,
      r.tenants === null ? '–' : String(r.tenants.refusedDeliveries),
      f1(r.archivesPerSecond),
      f0(r.latencyMs.p50),
      f0(r.latencyMs.p95),
      f0(r.latencyMs.p99),
      f0(r.latencyMs.max),
      f0(r.peakRssMiB),
      r.s3rverPeakRssMiB === null ? '–' : f0(r.s3rverPeakRssMiB),
      String(r.failedInvocations),
      String(r.deadLetters),
      String(r.pointerRaces),
      r.violations.length === 0 ? '**0**' : `**${r.violations.length}**`,
    ].join(' | '),
  );
  return [
    '| concurrency | archives | deliveries + redeliveries | refused deliveries | archives/s | p50 ms | p95 ms | p99 ms | max ms | peak RSS MiB | s3rver peak RSS MiB | failed invocations (retried) | dead-lettered | pointer races | violations |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}

function summarized(result: RoundResult): RoundResult {
  const slowest = result.slowest.map(
    (d) => `${d.id} (${d.label}) ${d.ms} ms${d.attempts > 1 ? ` after ${d.attempts} attempts` : ''}`,
  );
  process.stderr.write(
    `${result.label}: ${f1(result.archivesPerSecond)} archives/s, p50 ${f0(result.latencyMs.p50)} ms, ` +
      `p95 ${f0(result.latencyMs.p95)} ms, p99 ${f0(result.latencyMs.p99)} ms, peak RSS ${f0(result.peakRssMiB)} MiB, ` +
      `${result.failedInvocations} failed invocation(s), ${result.pointerRaces} pointer races, ` +
      `${result.writesAfterReads} writes held for reads, ${result.violations.length} violation(s); slowest: ${slowest.join(', ')}\n`,
  );
  if (result.tenants !== null) process.stderr.write(`${result.label}: ${callersLine(result)}\n`);
  for (const failure of result.failures)
    process.stderr.write(`${result.label}: failed invocation: ${failure}\n`);
  return result;
}

async function child(json: string): Promise<void> {
  const round = JSON.parse(json) as RoundOptions;
  const result = await runRound({ ...round, log: (line) => process.stderr.write(`${line}\n`) });
  await closeSharedParser();
  process.stdout.write(`\n${JSON.stringify(result)}\n`);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') return child(argv[1]!);
  const options = parseOptions(argv);
  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  const loadBefore = os.loadavg()[0]!;
  const corpusAvailable = corpusStatus();
  const corpus = options.corpus && corpusAvailable.ok ? CORPUS.map((name) => corpusFile(name)) : [];
  process.stderr.write(
    `soak: seed ${options.seed}, ${options.archives} archives per round at concurrency ${options.concurrency.join(', ')}, ` +
      `cap ${options.seconds} s, load average ${loadBefore.toFixed(2)}; corpus: ` +
      `${corpus.length > 0 ? CORPUS.join(', ') : options.corpus && !corpusAvailable.ok ? corpusAvailable.reason : 'off'}\n`,
  );
  const results: RoundResult[] = [];
  const notes: string[] = [];
  for (const [i, concurrency] of options.concurrency.entries()) {
    const round = soakRound(`c${concurrency}`, concurrency, {
      archives: options.archives,
      conditionalWrites: options.conditionalWrites,
      tenants: options.tenants,
      seed: options.seed + i,
      corpus,
      deadline,
    });
    results.push(summarized(await roundInChild(round, deadline + GRACE_MS)));
  }
  if (options.fault) {
    // Estimate from the round at the fault round's concurrency (or the slowest one).
    const like =
      results.find((r) => r.concurrency === FAULT_CONCURRENCY) ??
      results.reduce<RoundResult | undefined>(
        (a, b) => (a === undefined || b.seconds > a.seconds ? b : a),
        undefined,
      );
    const estimateMs = like
      ? (like.uploadSeconds + like.seconds) * 1000 * 1.5 + FAULT_DOWN_MS + 30_000
      : Infinity;
    if (Date.now() + estimateMs > deadline) {
      const note = `fault round skipped: about ${f0(estimateMs / 1000)} s needed, ${f0((deadline - Date.now()) / 1000)} s left of --seconds ${options.seconds}`;
      notes.push(note);
      process.stderr.write(`${note}\n`);
    } else {
      const round: RoundOptions = {
        ...soakRound(`c${FAULT_CONCURRENCY}-fault`, FAULT_CONCURRENCY, {
          archives: options.archives,
          conditionalWrites: options.conditionalWrites,
          tenants: options.tenants,
          seed: options.seed + 100,
          corpus,
          deadline,
        }),
        fault: { afterShare: 1 / 3, downMs: FAULT_DOWN_MS },
      };
      results.push(summarized(await roundInChild(round, deadline + GRACE_MS)));
    }
  }
  const loadAfter = os.loadavg()[0]!;
  const violations = results.flatMap((r) => r.violations.map((v) => ({ round: r.label, ...v })));
  const text = table(results);
  process.stdout.write(`\n${text}\n\n`);
  for (const v of violations.slice(0, 50))
    process.stdout.write(`VIOLATION ${v.round} ${v.invariant}: ${v.detail}\n`);
  if (violations.length > 50) process.stdout.write(`... and ${violations.length - 50} more\n`);
  process.stdout.write(
    `${violations.length === 0 ? 'all invariants held' : `${violations.length} violation(s)`} in ` +
      `${f0((Date.now() - started) / 1000)} s; load average ${loadBefore.toFixed(2)} at the start, ${loadAfter.toFixed(2)} at the end\n`,
  );
  if (options.json !== null)
    writeFileSync(
      options.json,
      JSON.stringify({ options, loadBefore, loadAfter, results, notes }, null, 2) + '\n',
    );
  if (options.writeDocs) {
    const when = new Date(started).toISOString().slice(0, 16).replace('T', ' ');
    // The command as run, less where its output went.
    const args = process.argv
      .slice(2)
      .filter((a, i, all) => a !== '--write-docs' && a !== '--json' && all[i - 1] !== '--json');
    const faults = results
      .filter((r) => r.fault !== null)
      .map(
        (r) =>
          `Fault round (${r.label}): s3rver killed after ${r.fault!.killedAfter} of ${r.deliveries} deliveries and ` +
          `started again ${r.fault!.downMs / 1000} s later; ${r.fault!.refused} requests refused while it was down and ` +
          `${r.fault!.answersLost} lost ${r.fault!.answersLost === 1 ? 'its answer' : 'their answers'} in flight; ` +
          `${r.failedInvocations} invocations failed and were retried, ${r.deadLetters} dead-lettered.`,
      );
    const callers = results.filter((r) => r.tenants !== null).map((r) => `${r.label}: ${callersLine(r)}.`);
    const block = [
      START,
      `Recorded ${when} UTC with \`npm run soak${args.length > 0 ? ` -- ${args.join(' ')}` : ''}\` (seed ${options.seed}) on the shared 2-core`,
      `development machine (${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.versions.node}), **load average ${loadBefore.toFixed(2)} at the start and ${loadAfter.toFixed(2)} at the end**,`,
      `${f0((Date.now() - started) / 1000)} s in all.${notes.length > 0 ? ` ${notes.map((n) => n[0]!.toUpperCase() + n.slice(1)).join('. ')}.` : ''}`,
      '',
      text,
      '',
      ...faults,
      ...(faults.length > 0 ? [''] : []),
      options.tenants
        ? `Mixed callers under an access policy (\`--no-tenants\` for a single-tenant install): ${callers.join(' ')}`
        : 'Single-tenant (`--no-tenants`): no access policy, every delivery allowed.',
      '',
      violations.length === 0
        ? 'Every invariant held in every round.'
        : `**${violations.length} violation(s)**: ${violations
            .slice(0, 5)
            .map((v) => `${v.round} ${v.invariant}: ${v.detail}`)
            .join('; ')}.`,
      END,
    ].join('\n');
    const docs = readFileSync(DOCS, 'utf8');
    const from = docs.indexOf(START);
    const to = docs.indexOf(END);
    if (from < 0 || to < from) throw new Error(`${DOCS} has no ${START} … ${END} block`);
    writeFileSync(DOCS, docs.slice(0, from) + block + docs.slice(to + END.length));
    process.stderr.write(`wrote the figures into ${path.relative(REPO_ROOT, DOCS)}\n`);
  }
  process.exitCode = violations.length === 0 ? 0 : 1;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`soak failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
