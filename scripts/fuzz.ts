/**
 * Time-boxed fuzz run of the scan pipeline (docs/security.md §7).
 *
 *   npx tsx scripts/fuzz.ts --seconds 60 [--seed N] [--case-timeout-ms 30000] [--out DIR]
 *
 * Each case is a random archive built from real corpus files (`../shared/corpus`, or the directory in
 * TFGUARD_CORPUS_DIR; without a corpus the run stops at once with exit 2), mutated at the
 * file level (bit flips, truncation, insertions of random UTF-8 and bracket runs, nesting bombs,
 * noise) and at the container level (bit flips, truncation, inserted and duplicated byte runs, a
 * mutated tar inside an intact gzip), then scanned with `scanBytes`. The run fails (exit 1) on the
 * first case that
 *   - throws anything but an `InputError`,
 *   - takes longer than the per-case timeout (a hang),
 *   - yields a report naming a path outside the archive (or not in it), or
 *   - is read differently by the in-memory tar fast path and the streaming tar reader,
 * after writing the case as base64 (plus its metadata) to a file under a temporary directory and
 * printing its path. Replay one with `--replay FILE.b64`. Cases are derived from `--seed` + index,
 * so a seed and an index reproduce a case exactly.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { closeSharedParser } from '../src/scan';
import {
  archiveArbitrary,
  loadCorpusFiles,
  pack,
  type CorpusFile,
  type GeneratedArchive,
} from '../test/support/generators';
import { corpusStatus } from '../test/support/external';
import { checkPaths, checkTarReaders, outcome, PropertyViolation } from '../test/support/scan-properties';

interface Options {
  seconds: number;
  seed: number;
  caseTimeoutMs: number;
  out: string | null;
  replay: string | null;
}

const USAGE =
  'usage: tsx scripts/fuzz.ts --seconds N [--seed N] [--case-timeout-ms N] [--out DIR] [--replay FILE.b64]\n';

function usage(message: string): never {
  process.stderr.write(`${message}\n${USAGE}`);
  process.exit(2);
}

function parseOptions(argv: string[]): Options {
  if (argv.includes('--help')) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const options: Options = {
    seconds: 60,
    seed: Math.floor(Math.random() * 0x7fffffff),
    caseTimeoutMs: 30_000,
    out: null,
    replay: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    const int = (): number => {
      const n = Number(value);
      if (value === undefined || !Number.isInteger(n) || n < 0) usage(`${flag} needs a non-negative integer`);
      i++;
      return n;
    };
    switch (flag) {
      case '--seconds':
        options.seconds = int();
        break;
      case '--seed':
        options.seed = int();
        break;
      case '--case-timeout-ms':
        options.caseTimeoutMs = int();
        break;
      case '--out':
        if (value === undefined) usage('--out needs a directory');
        options.out = value;
        i++;
        break;
      case '--replay':
        if (value === undefined) usage('--replay needs a file');
        options.replay = value;
        i++;
        break;
      default:
        usage(`unknown argument ${String(flag)}`);
    }
  }
  return options;
}

type ContainerMutation =
  | { kind: 'none' }
  | { kind: 'flip'; flips: { at: number; bit: number }[] }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'duplicate'; at: number; length: number }
  | { kind: 'inner-flip'; flips: { at: number; bit: number }[] };

const flips = fc.array(fc.record({ at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }), {
  minLength: 1,
  maxLength: 16,
});

const containerMutation: fc.Arbitrary<ContainerMutation> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<ContainerMutation>({ kind: 'none' }) },
  { weight: 2, arbitrary: flips.map((f): ContainerMutation => ({ kind: 'flip', flips: f })) },
  { weight: 1, arbitrary: fc.nat().map((at): ContainerMutation => ({ kind: 'truncate', at })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 1024 }) })
      .map((r): ContainerMutation => ({ kind: 'insert', ...r })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ at: fc.nat(), length: fc.integer({ min: 1, max: 4096 }) })
      .map((r): ContainerMutation => ({ kind: 'duplicate', ...r })),
  },
  { weight: 2, arbitrary: flips.map((f): ContainerMutation => ({ kind: 'inner-flip', flips: f })) },
);

interface FuzzCase {
  archive: GeneratedArchive;
  mutation: ContainerMutation;
}

function flipBits(bytes: Buffer, list: { at: number; bit: number }[]): Buffer {
  const out = Buffer.from(bytes);
  if (out.length === 0) return out;
  for (const { at, bit } of list) {
    const i = at % out.length;
    out[i] = (out[i] as number) ^ (1 << bit);
  }
  return out;
}

/** The bytes of a case: the packed archive, mutated as the case says. */
async function materialize(c: FuzzCase): Promise<Buffer> {
  const { archive, mutation } = c;
  if (mutation.kind === 'inner-flip') {
    // A hostile tar (or zip) inside an intact container: the gzip layer decodes cleanly.
    if (archive.format === 'tar.gz')
      return gzipSync(flipBits(await pack('tar', archive.entries), mutation.flips));
    return flipBits(await pack(archive.format, archive.entries), mutation.flips);
  }
  const bytes = await pack(archive.format, archive.entries);
  const at = (n: number): number => (bytes.length === 0 ? 0 : n % bytes.length);
  switch (mutation.kind) {
    case 'none':
      return bytes;
    case 'flip':
      return flipBits(bytes, mutation.flips);
    case 'truncate':
      return bytes.subarray(0, at(mutation.at));
    case 'insert':
      return Buffer.concat([
        bytes.subarray(0, at(mutation.at)),
        mutation.bytes,
        bytes.subarray(at(mutation.at)),
      ]);
    case 'duplicate': {
      const start = at(mutation.at);
      const slice = bytes.subarray(start, start + mutation.length);
      return Buffer.concat([bytes.subarray(0, start), slice, slice, bytes.subarray(start + slice.length)]);
    }
  }
}

class CaseTimeout extends Error {
  override readonly name = 'CaseTimeout';
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CaseTimeout(`no result after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Scans one case and checks it; returns the rejection code, or `accepted`. Throws on a violation. */
async function runCase(name: string, bytes: Buffer, caseTimeoutMs: number): Promise<string> {
  // A per-file parser budget well under the case timeout: a slow file is a finding, not a hang.
  const parserBudget = Math.max(1000, Math.floor(caseTimeoutMs / 4));
  await withTimeout(checkTarReaders(name, bytes), caseTimeoutMs);
  const result = await withTimeout(
    outcome(name, bytes, { parser: { timeoutMs: parserBudget } }),
    caseTimeoutMs,
  );
  if (result.kind === 'rejected') return result.error.code;
  await withTimeout(checkPaths(name, bytes, result.report), caseTimeoutMs);
  return 'accepted';
}

async function writeReproducer(
  options: Options,
  name: string,
  bytes: Buffer,
  meta: Record<string, unknown>,
): Promise<string> {
  const dir = options.out ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-fuzz-')));
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}.b64`);
  await fs.writeFile(file, `${bytes.toString('base64')}\n`);
  await fs.writeFile(path.join(dir, `${name}.json`), `${JSON.stringify(meta, null, 2)}\n`);
  return file;
}

function describe(err: unknown): string {
  if (err instanceof PropertyViolation || err instanceof CaseTimeout) return err.message;
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

async function replay(options: Options): Promise<number> {
  const file = options.replay as string;
  const bytes = Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
  const metaFile = file.replace(/\.b64$/, '.json');
  const meta = JSON.parse(await fs.readFile(metaFile, 'utf8').catch(() => '{}')) as { name?: string };
  const name = meta.name ?? 'replay.tar.gz';
  try {
    const verdict = await runCase(name, bytes, options.caseTimeoutMs);
    process.stdout.write(`replay ${file}: ${verdict} (no violation)\n`);
    return 0;
  } catch (err) {
    process.stdout.write(`replay ${file}: VIOLATION: ${describe(err)}\n`);
    return 1;
  }
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options.replay !== null) return replay(options);

  const available = corpusStatus();
  if (!available.ok) {
    process.stderr.write(`fuzz: cannot run: ${available.reason}\n`);
    return 2;
  }
  const corpus: CorpusFile[] = await loadCorpusFiles();
  const arbitrary = fc.record({ archive: archiveArbitrary(corpus, 8), mutation: containerMutation });
  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  const verdicts = new Map<string, number>();
  let cases = 0;
  process.stdout.write(
    `fuzz: seed ${options.seed}, ${options.seconds} s, case timeout ${options.caseTimeoutMs} ms, ${corpus.length} corpus files\n`,
  );

  while (Date.now() < deadline) {
    const index = cases;
    const [fuzzCase] = fc.sample(arbitrary, { seed: options.seed + index, numRuns: 1 });
    if (fuzzCase === undefined) throw new Error('fast-check produced no sample');
    const name = `fuzz.${fuzzCase.archive.format}`;
    const bytes = await materialize(fuzzCase);
    cases += 1;
    try {
      const verdict = await runCase(name, bytes, options.caseTimeoutMs);
      verdicts.set(verdict, (verdicts.get(verdict) ?? 0) + 1);
    } catch (err) {
      const kind =
        err instanceof CaseTimeout ? 'hang' : err instanceof PropertyViolation ? 'property' : 'exception';
      const file = await writeReproducer(options, `case-${options.seed}-${index}`, bytes, {
        name,
        seed: options.seed,
        index,
        kind,
        error: describe(err),
        entries: fuzzCase.archive.entries.map((e) => ({ path: e.path, bytes: e.content.length })),
        mutation: fuzzCase.mutation.kind,
      });
      process.stdout.write(
        `FAIL (${kind}) at case ${index} (seed ${options.seed}): ${describe(err)}\nreproducer: ${file}\n` +
          `replay: npx tsx scripts/fuzz.ts --replay ${file}\n`,
      );
      return 1;
    }
  }

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const summary = [...verdicts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([verdict, n]) => `${verdict} ${n}`)
    .join(', ');
  process.stdout.write(`fuzz: ${cases} cases in ${seconds} s, no violation (${summary})\n`);
  return 0;
}

main().then(
  async (code) => {
    await closeSharedParser();
    // A hung hcl2json call must not keep a failed run alive.
    process.exit(code);
  },
  async (err: unknown) => {
    process.stderr.write(`fuzz: internal error: ${describe(err)}\n`);
    await closeSharedParser();
    process.exit(2);
  },
);
