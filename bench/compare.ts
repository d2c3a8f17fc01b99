/**
 * `npm run bench:compare -- --against DIR` — this checkout's scan against another checkout's (an
 * older commit, a branch), measured the same way, on the same machine, at the same time.
 *
 * A single `npm run bench` median moves by 15% or more between two runs of the same code on a
 * shared machine (garbage collection and the host decide more than the code). A criterion such as
 * "medians within 10% of commit X" needs both commits measured together: this runs the bench's own
 * `archive` and `cache` children (bench/run.ts) of each checkout alternately, several rounds, in
 * fresh processes, and pools every timed run. It prints, per archive, the median and the first
 * quartile of the full scan, the extraction of the configuration files alone, and the rescan with
 * a warm extraction cache, and the change. `--against .` compares the checkout with itself: the
 * noise floor (on the 2-core machine, up to about ±6% on a median after 4 rounds).
 *
 * DIR is a checkout with its dependencies installed (or a `node_modules` link to these), e.g.
 * `git worktree add ../base <commit> && ln -s "$PWD/node_modules" ../base/node_modules`.
 *
 * Options: --against DIR (required), --rounds N (default 5), --runs N (timed runs per child,
 * default 15), --only NAME[,NAME] (archives whose name contains one of these; default: every corpus
 * archive), --help.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { corpusDir, corpusStatus } from '../test/support/external';
import { runBenchChild, type ChildResult } from './child';

const ROOT = path.resolve(__dirname, '..');
const USAGE =
  'usage: tsx bench/compare.ts --against DIR [--rounds N] [--runs N] [--only NAME[,NAME]]\n' +
  "Runs this checkout's and DIR's bench children alternately and compares pooled medians (see the header).\n";

interface Stats {
  runs: number[];
}

type Measure = 'scan' | 'extract files' | 'warm-cache rescan';
const MEASURES: Measure[] = ['scan', 'extract files', 'warm-cache rescan'];

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

/** Runs one bench child of the checkout at `root` (its own bench/run.ts) and returns its result. */
function child(root: string, kind: string, file: string, runs: number): Promise<ChildResult> {
  return runBenchChild(path.join(root, 'bench', 'run.ts'), root, kind, [file, String(runs)]);
}

function quantile(sorted: number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (at - lo);
}

function summary(runs: number[]): { median: number; p25: number; n: number } {
  const sorted = [...runs].sort((a, b) => a - b);
  return { median: quantile(sorted, 0.5), p25: quantile(sorted, 0.25), n: sorted.length };
}

function pct(now: number, then: number): string {
  const d = ((now - then) / then) * 100;
  return `${d >= 0 ? '+' : ''}${d.toFixed(1)}%`;
}

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    process.stdout.write(USAGE);
    return;
  }
  const against = option('--against');
  if (against === undefined || !existsSync(path.join(against, 'bench', 'run.ts'))) {
    process.stderr.write(`${USAGE}--against must name a checkout that has bench/run.ts\n`);
    process.exit(2);
  }
  const status = corpusStatus();
  if (!status.ok) {
    process.stderr.write(`bench:compare needs the corpus: ${status.reason}\n`);
    process.exit(2);
  }
  const rounds = Math.max(1, Number(option('--rounds') ?? 5));
  const runs = Math.max(3, Number(option('--runs') ?? 15));
  const only = option('--only')
    ?.split(',')
    .filter((s) => s !== '');
  const corpus = corpusDir();
  const files = readdirSync(corpus)
    .filter((f) => f.endsWith('.tar.gz') && (only === undefined || only.some((o) => f.includes(o))))
    .sort()
    .map((f) => path.join(corpus, f));
  const checkouts = [
    { label: path.relative(process.cwd(), path.resolve(against)) || against, root: path.resolve(against) },
    { label: 'this checkout', root: ROOT },
  ];
  // pooled[archive][checkout][measure] = every timed run
  const pooled = new Map<string, Map<string, Record<Measure, number[]>>>();
  for (let round = 1; round <= rounds; round++) {
    process.stderr.write(`round ${String(round)}/${String(rounds)}…\n`);
    for (const file of files) {
      const name = path.basename(file, '.tar.gz');
      const byCheckout = pooled.get(name) ?? new Map<string, Record<Measure, number[]>>();
      pooled.set(name, byCheckout);
      // Alternate which checkout goes first, so neither always runs on a warmer machine.
      const order = round % 2 === 1 ? checkouts : [...checkouts].reverse();
      for (const c of order) {
        const a = await child(c.root, 'archive', file, runs);
        const w = await child(c.root, 'cache', file, runs);
        const m = byCheckout.get(c.label) ?? { scan: [], 'extract files': [], 'warm-cache rescan': [] };
        m.scan.push(...(a.scan as Stats).runs);
        m['extract files'].push(...(a.parse as Stats).runs);
        m['warm-cache rescan'].push(...(w.warm as Stats).runs);
        byCheckout.set(c.label, m);
      }
    }
  }
  const [then, now] = checkouts as [(typeof checkouts)[number], (typeof checkouts)[number]];
  const lines = [
    `Pooled over ${String(rounds)} rounds × ${String(runs)} timed runs per child (ms; median, first quartile):`,
    '',
    `| archive | measure | ${then.label} median (p25) | this checkout median (p25) | change median (p25) |`,
    '|---|---|---:|---:|---:|',
  ];
  for (const [name, byCheckout] of pooled) {
    for (const measure of MEASURES) {
      const a = summary((byCheckout.get(then.label) as Record<Measure, number[]>)[measure]);
      const b = summary((byCheckout.get(now.label) as Record<Measure, number[]>)[measure]);
      lines.push(
        `| ${name} | ${measure} | ${a.median.toFixed(1)} (${a.p25.toFixed(1)}) | ${b.median.toFixed(1)} (${b.p25.toFixed(1)}) | ` +
          `${pct(b.median, a.median)} (${pct(b.p25, a.p25)}) |`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
