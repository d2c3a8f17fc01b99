/**
 * The repair study (issue 21, docs/fix.md "The repair study"): runs the real `tfguard fix` on real
 * repositories and judges every fix it makes with tools tfguard did not write.
 *
 *   npm run build:cli   # the study runs bin/tfguard.js, i.e. the bundle built from this tree
 *   npx tsx scripts/fix-study.ts [--cli FILE] [--corpus DIR] [--no-corpus] [--work DIR] [--json FILE]
 *                                [--markdown FILE] [--diffs FILE] [REPO_DIR ...]
 *
 * `--cli FILE`: the tfguard entry point to study (default: bin/tfguard.js of this tree; another
 * build, e.g. of an earlier commit, gives the before figures).
 *
 * Inputs: every `.tar.gz` in `--corpus` (default: $TFGUARD_CORPUS_DIR, else /work/shared/corpus)
 * and each REPO_DIR (a checkout; its commit is read with `git rev-parse HEAD` when it is a git
 * checkout; `.git` is never copied). Nothing is written into the inputs: each is copied into
 * `--work` (default: a new directory under the system temp directory).
 *
 * For each input:
 *  - `tfguard scan --format json` (the findings and their `fix.edits`, the roots and their modules);
 *  - `tfguard fix --dry-run` (the patch, and the list of fixed findings on stderr) and `tfguard fix`
 *    in place on a copy;
 *  - `git apply --check` of the patch on another copy, then `git apply`, and the two copies compared
 *    file by file;
 *  - `terraform fmt -check` of every edited `.tf`/`.tofu` file before and after (`.tofu` checked
 *    under a `.tf` name);
 *  - a second `tfguard fix --dry-run` on the fixed copy (must print an empty patch);
 *  - a rescan of the fixed copy: the fixed findings gone, no new finding in an edited module;
 *  - `terraform providers` in every root whose configuration includes an edited module, on a copy
 *    without lock files (remote module calls pointed at an empty directory, since nothing is
 *    downloaded here), before and after: the configuration must still load, name the same
 *    providers, and every provider bounded above before (by the union of every module's
 *    constraints, as terraform prints them) must still be bounded after. Repositories with `.tofu`
 *    files are checked twice: as Terraform reads them and as OpenTofu does (`x.tofu` in place of
 *    `x.tf`).
 *
 * Output: a table of fixes by rule with the automatic verdicts (Markdown on stdout or
 * `--markdown FILE`, every fix with its checks in `--json FILE`, the diff of every fix in
 * `--diffs FILE` for review). A fix is counted once per finding `tfguard fix` lists as fixed; the
 * files it edits are those of the finding's `fix.edits` (and its own file).
 *
 * Exit 0 when every automatic check passed, 1 when one failed, 2 on bad usage.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..');
let CLI = path.join(REPO_ROOT, 'bin', 'tfguard.js');

interface Args {
  corpus: string | null;
  work: string;
  json: string | null;
  markdown: string | null;
  diffs: string | null;
  repos: string[];
}

function usage(message: string): never {
  process.stderr.write(`fix-study: ${message}\n`);
  process.stderr.write(
    'usage: npx tsx scripts/fix-study.ts [--cli FILE] [--corpus DIR] [--no-corpus] [--work DIR] [--json FILE] [--markdown FILE] [--diffs FILE] [REPO_DIR ...]\n',
  );
  process.exit(2);
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    corpus: process.env.TFGUARD_CORPUS_DIR ?? '/work/shared/corpus',
    work: '',
    json: null,
    markdown: null,
    diffs: null,
    repos: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) usage(`${a} needs a value`);
      return v;
    };
    if (a === '--cli') CLI = path.resolve(value());
    else if (a === '--corpus') args.corpus = value();
    else if (a === '--no-corpus') args.corpus = null;
    else if (a === '--work') args.work = value();
    else if (a === '--json') args.json = value();
    else if (a === '--markdown') args.markdown = value();
    else if (a === '--diffs') args.diffs = value();
    else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else args.repos.push(a);
  }
  if (args.work === '') args.work = fs.mkdtempSync(path.join(os.tmpdir(), 'fix-study-'));
  return args;
}

// ---------------------------------------------------------------------------------------------
// processes and copies

function run(cmd: string, argv: string[], cwd: string, input?: string): SpawnSyncReturns<string> {
  return spawnSync(cmd, argv, {
    cwd,
    input,
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
    env: {
      ...process.env,
      NO_COLOR: '1',
      FORCE_COLOR: '0',
      TF_CLI_CONFIG_FILE: '/dev/null',
      TF_IN_AUTOMATION: '1',
    },
  });
}

function tfguard(argv: string[]): SpawnSyncReturns<string> {
  return run(process.execPath, [CLI, ...argv], REPO_ROOT);
}

/** Copies a directory tree (symlinks and modes kept), leaving `.git` out. */
function copyTree(from: string, to: string): void {
  fs.rmSync(to, { recursive: true, force: true });
  fs.mkdirSync(to, { recursive: true });
  const tar = spawnSync('sh', [
    '-c',
    `tar -C "$1" --exclude=./.git -cf - . | tar -C "$2" -xpf -`,
    'sh',
    from,
    to,
  ]);
  if (tar.status !== 0) throw new Error(`copying ${from}: ${tar.stderr.toString()}`);
}

function walkFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(...walkFiles(dir, r));
    else out.push(r);
  }
  return out;
}

function readMaybe(file: string): Buffer | null {
  try {
    return fs.readFileSync(file);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// the report tfguard writes (only the fields the study reads)

interface Edit {
  range: { file: string; start: { line: number } };
  text: string;
}
interface Finding {
  ruleId: string;
  severity: string;
  file: string;
  line: number;
  module?: string;
  message: string;
  fix?: { description: string; edits?: Edit[] };
}
interface Root {
  path: string;
  kind?: string;
  engine?: string;
  modules: string[];
}
interface Report {
  findings: Finding[];
  roots: Root[];
}

function scanJson(dir: string): Report {
  const r = tfguard(['scan', dir, '--format', 'json', '--fail-on', 'never']);
  if (r.status !== 0) throw new Error(`tfguard scan ${dir}: exit ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Report;
}

interface Fixed {
  file: string;
  line: number;
  rule: string;
  description: string;
}

/** The "would fix" / "fixed" list of `tfguard fix`: `  FILE:LINE  RULE: DESCRIPTION`. */
function parseFixed(summary: string): Fixed[] {
  const out: Fixed[] = [];
  let inFixed = false;
  for (const line of summary.split('\n')) {
    if (/^tfguard fix: (would fix|fixed)/.test(line)) inFixed = true;
    else if (/^\S/.test(line)) inFixed = false;
    else if (inFixed) {
      const m = /^ {2}(.+):(\d+) {2}([a-z0-9-]+): (.*)$/.exec(line);
      if (m) out.push({ file: m[1]!, line: Number(m[2]), rule: m[3]!, description: m[4]! });
    }
  }
  return out;
}

/** The patch split by file: the `b/` name (or the `a/` name of a deletion) → its section. */
function splitPatch(patch: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = patch.split('\n');
  let current: string | null = null;
  let buf: string[] = [];
  const flush = (): void => {
    if (current !== null) out.set(current, buf.join('\n'));
  };
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const next = lines[i + 1];
    if (l.startsWith('--- ') && next !== undefined && next.startsWith('+++ ')) {
      flush();
      const name = (s: string): string | null => {
        let n = s.slice(4).replace(/\t$/, '');
        if (n.startsWith('"')) n = JSON.parse(n) as string;
        return n === '/dev/null' ? null : n.slice(2);
      };
      current = name(next) ?? name(l) ?? '?';
      buf = [l];
    } else if (current !== null && !l.startsWith('#')) buf.push(l);
  }
  flush();
  return out;
}

// ---------------------------------------------------------------------------------------------
// terraform as the oracle

const TF_FILE = /\.(tf|tofu)$/;

function fmtClean(content: Buffer, tmp: string): boolean {
  const f = path.join(tmp, 'check.tf');
  fs.writeFileSync(f, content);
  return run('terraform', ['fmt', '-check', '-list=false', 'check.tf'], tmp).status === 0;
}

interface ProvidersResult {
  loads: boolean;
  error?: string;
  /** provider address → every constraint terraform prints for it anywhere in the tree */
  providers: Map<string, string[]>;
  stubbed: number;
}

/** Parses `terraform providers`: `provider[ADDR] CONSTRAINTS` on the configuration's lines. */
function parseProviders(out: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  const config = out.split(/Providers required by state/)[0] ?? '';
  for (const m of config.matchAll(/provider\[([^\]]+)\]( [^\n]*)?/g)) {
    const addr = m[1]!;
    const c = (m[2] ?? '').trim();
    const list = map.get(addr) ?? [];
    if (c !== '') list.push(c);
    map.set(addr, list);
  }
  return map;
}

/** Bounded above: some constraint of the union is `~>`, `<`, `<=`, `=` or an exact version. */
function bounded(constraints: string[]): boolean {
  return constraints
    .flatMap((c) => c.split(','))
    .map((c) => c.trim())
    .some((c) => /^(~>|<=?|=)/.test(c) || /^v?\d/.test(c));
}

/**
 * Points the module call at FILE:LINE (a call `terraform get` could not download) at an empty
 * directory: its `source` line replaced, its `version` line removed. Only the copy is changed.
 */
function stubModuleCall(tree: string, file: string, line: number): boolean {
  const text = readMaybe(file)?.toString('utf8');
  if (text === undefined) return false;
  const lines = text.split('\n');
  const empty = path.join(tree, '.fix-study-empty-module');
  fs.mkdirSync(empty, { recursive: true });
  let rel = path.relative(path.dirname(file), empty);
  if (!rel.startsWith('.')) rel = `./${rel}`;
  if (!/\{\s*(#.*|\/\/.*)?$/.test(lines[line - 1] ?? '')) return false; // a one-line call
  let depth = 0;
  let changed = false;
  for (let i = line - 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (depth === 1 && /^\s*source\s*=/.test(l)) {
      lines[i] = l.replace(/=.*$/, `= "${rel}"`);
      changed = true;
    } else if (depth === 1 && /^\s*version\s*=/.test(l)) {
      lines[i] = '';
    }
    for (const ch of l.replace(/"(\\.|[^"\\])*"/g, '""').replace(/(#|\/\/).*$/, '')) {
      if (ch === '{') depth++;
      else if (ch === '}') depth--;
    }
    if (depth <= 0) break;
  }
  if (changed) fs.writeFileSync(file, lines.join('\n'));
  return changed;
}

/**
 * Takes the `backend` and `cloud` blocks out of the root's files in the copy: `terraform providers`
 * refuses to run before `terraform init` has set up any backend, and nothing here depends on one.
 */
function dropBackends(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    if (!name.endsWith('.tf')) continue;
    const file = path.join(dir, name);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    let changed = false;
    for (let i = 0; i < lines.length; i++) {
      if (!/^\s*(backend\s+"[^"]*"|cloud)\s*\{/.test(lines[i]!)) continue;
      let depth = 0;
      for (let j = i; j < lines.length; j++) {
        for (const ch of lines[j]!.replace(/"(\\.|[^"\\])*"/g, '""').replace(/(#|\/\/).*$/, '')) {
          if (ch === '{') depth++;
          else if (ch === '}') depth--;
        }
        lines[j] = '';
        changed = true;
        if (depth <= 0) break;
      }
    }
    if (changed) fs.writeFileSync(file, lines.join('\n'));
  }
}

function terraformProviders(tree: string, root: string): ProvidersResult {
  const dir = path.join(tree, root);
  dropBackends(dir);
  let stubbed = 0;
  for (let attempt = 0; attempt < 8; attempt++) {
    const get = run('terraform', ['get', '-no-color'], dir);
    if (get.status === 0) break;
    const failed = [...get.stderr.matchAll(/on (.+) line (\d+):\n\s+\d+: module "/g)];
    if (failed.length === 0) {
      return { loads: false, error: firstError(get.stderr), providers: new Map(), stubbed };
    }
    let progress = false;
    for (const m of failed) {
      if (stubModuleCall(tree, path.resolve(dir, m[1]!), Number(m[2]))) {
        progress = true;
        stubbed++;
      }
    }
    if (!progress) return { loads: false, error: firstError(get.stderr), providers: new Map(), stubbed };
  }
  const p = run('terraform', ['providers', '-no-color'], dir);
  if (p.status !== 0) return { loads: false, error: firstError(p.stderr), providers: new Map(), stubbed };
  return { loads: true, providers: parseProviders(p.stdout), stubbed };
}

function firstError(stderr: string): string {
  const m = /Error: ([^\n]+)/.exec(stderr);
  return m ? m[1]! : (stderr.trim().split('\n')[0] ?? '');
}

/** A copy of TREE for terraform: no lock files; in the OpenTofu view `x.tofu` replaces `x.tf`. */
function oracleTree(from: string, to: string, view: 'terraform' | 'opentofu'): void {
  copyTree(from, to);
  for (const f of walkFiles(to)) {
    const abs = path.join(to, f);
    if (path.basename(f) === '.terraform.lock.hcl') fs.rmSync(abs);
    else if (path.basename(f) === '.terraform' || f.includes('/.terraform/')) continue;
    else if (view === 'opentofu' && /\.tofu(\.json)?$/.test(f)) {
      fs.renameSync(
        abs,
        abs.replace(/\.tofu(\.json)?$/, (_m, j: string | undefined) => `.tf${j ?? ''}`),
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------
// one input

interface Check {
  ok: boolean | null; // null: not applicable / not checkable
  detail?: string;
}

interface FixRecord {
  input: string;
  rule: string;
  file: string;
  line: number;
  description: string;
  files: string[];
  diff: string;
  roots: string[];
  checks: {
    gitApply: Check;
    sameAsInPlace: Check;
    fmt: Check;
    providers: Check;
    unbounded: Check;
    rescan: Check;
    secondRun: Check;
  };
}

interface InputResult {
  name: string;
  origin: string;
  fixes: FixRecord[];
  stillNeedsPerson: number;
  newFindings: Finding[];
  errors: string[];
}

function studyInput(name: string, origin: string, prepare: (dir: string) => void, work: string): InputResult {
  const base = path.join(work, name);
  fs.rmSync(base, { recursive: true, force: true });
  fs.mkdirSync(base, { recursive: true });
  const orig = path.join(base, 'orig');
  fs.mkdirSync(orig);
  prepare(orig);
  const result: InputResult = { name, origin, fixes: [], stillNeedsPerson: 0, newFindings: [], errors: [] };

  const before = scanJson(orig);
  const dry = tfguard(['fix', orig, '--dry-run', '--fail-on', 'never']);
  if (dry.status !== 0) result.errors.push(`fix --dry-run: exit ${dry.status}: ${dry.stderr.slice(0, 400)}`);
  const patch = dry.stdout;
  const fixed = parseFixed(dry.stderr);
  result.stillNeedsPerson = Number(/still needs a person: (\d+)/.exec(dry.stderr)?.[1] ?? 0);
  if (fixed.length === 0) return result;
  fs.writeFileSync(path.join(base, 'fix.patch'), patch);

  const inplace = path.join(base, 'fixed');
  copyTree(orig, inplace);
  const fixRun = tfguard(['fix', inplace, '--fail-on', 'never']);
  if (fixRun.status !== 0) result.errors.push(`fix: exit ${fixRun.status}: ${fixRun.stderr.slice(0, 400)}`);
  const fixedInPlace = parseFixed(fixRun.stdout);
  if (fixedInPlace.length !== fixed.length) {
    result.errors.push(`fix in place fixed ${fixedInPlace.length} findings, --dry-run ${fixed.length}`);
  }

  const applied = path.join(base, 'applied');
  copyTree(orig, applied);
  const check = run('git', ['apply', '--check', path.join(base, 'fix.patch')], applied);
  const apply = check.status === 0 ? run('git', ['apply', path.join(base, 'fix.patch')], applied) : check;
  const gitApplyOk = check.status === 0 && apply.status === 0;

  const sections = splitPatch(patch);
  const second = tfguard(['fix', inplace, '--dry-run', '--fail-on', 'never']);
  const secondFiles = new Set(splitPatch(second.stdout).keys());
  const after = scanJson(inplace);

  // findings counted by rule and file, before and after
  const count = (r: Report): Map<string, number> => {
    const m = new Map<string, number>();
    for (const f of r.findings) m.set(`${f.ruleId}\0${f.file}`, (m.get(`${f.ruleId}\0${f.file}`) ?? 0) + 1);
    return m;
  };
  const cBefore = count(before);
  const cAfter = count(after);
  const fixedCount = new Map<string, number>();
  for (const f of fixed)
    fixedCount.set(`${f.rule}\0${f.file}`, (fixedCount.get(`${f.rule}\0${f.file}`) ?? 0) + 1);
  const newByFile = new Map<string, Finding[]>();
  for (const f of after.findings) {
    const k = `${f.ruleId}\0${f.file}`;
    if ((cAfter.get(k) ?? 0) > (cBefore.get(k) ?? 0)) {
      const list = newByFile.get(f.file) ?? [];
      if (!list.some((x) => x.ruleId === f.ruleId)) list.push(f);
      newByFile.set(f.file, list);
    }
  }
  result.newFindings = [...newByFile.values()].flat();

  const tmp = path.join(base, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  const hasTofu = walkFiles(orig).some((f) => /\.tofu(\.json)?$/.test(f));
  const views: ('terraform' | 'opentofu')[] = hasTofu ? ['terraform', 'opentofu'] : ['terraform'];
  const oracleCache = new Map<string, ProvidersResult>();
  const oracle = (
    state: 'before' | 'after',
    view: 'terraform' | 'opentofu',
    root: string,
  ): ProvidersResult => {
    const key = `${state}\0${view}\0${root}`;
    const hit = oracleCache.get(key);
    if (hit) return hit;
    const tree = path.join(base, `oracle-${state}-${view}`);
    if (!fs.existsSync(tree)) oracleTree(state === 'before' ? orig : inplace, tree, view);
    const res = terraformProviders(tree, root);
    oracleCache.set(key, res);
    return res;
  };

  for (const f of fixed) {
    const finding = before.findings.find(
      (x) => x.ruleId === f.rule && x.file === f.file && x.line === f.line,
    );
    const files = [...new Set([f.file, ...(finding?.fix?.edits ?? []).map((e) => e.range.file)])].sort();
    const edited = files.filter((x) => sections.has(x));
    const diff = edited.map((x) => sections.get(x)!).join('\n');
    const dirs = new Set(files.map((x) => path.posix.dirname(x)));
    const roots = before.roots
      .filter((r) => r.modules.some((m) => dirs.has(m)) || dirs.has(r.path))
      .map((r) => r.path)
      .sort();

    // git apply and the in-place result
    const differing = edited.filter((x) => {
      const a = readMaybe(path.join(applied, x));
      const b = readMaybe(path.join(inplace, x));
      return a === null || b === null || !a.equals(b);
    });
    // fmt before and after
    const fmtBad: string[] = [];
    for (const x of edited.filter((e) => TF_FILE.test(e))) {
      const was = readMaybe(path.join(orig, x));
      const now = readMaybe(path.join(inplace, x));
      if (now === null) continue;
      if ((was === null || fmtClean(was, tmp)) && !fmtClean(now, tmp)) fmtBad.push(x);
    }
    // terraform providers, per root and view; a lost bound is this fix's when it is about that
    // provider (the finding's message names it as `(namespace/type)`), or names none
    const named = [...(finding?.message ?? '').matchAll(/\(([\w.-]+\/[\w.-]+(?:\/[\w.-]+)?)\)/g)].map((m) =>
      m[1]!.toLowerCase(),
    );
    const concerns = (addr: string): boolean =>
      named.length === 0 || named.some((n) => addr.toLowerCase().endsWith(`/${n}`));
    const providerProblems: string[] = [];
    const unboundedRoots: string[] = [];
    let providerChecked = 0;
    const notLoading: string[] = [];
    // No root uses the edited module (a module published for other repositories): it is loaded on
    // its own, for the providers check only (losing its own cap is what the fix is for).
    const checkDirs = roots.length > 0 ? roots : [...dirs];
    for (const root of checkDirs) {
      const isRoot = roots.includes(root);
      // A root only OpenTofu runs (its settings in .tofu files) is judged as OpenTofu reads it.
      const engine = before.roots.find((r) => r.path === root)?.engine;
      for (const view of engine === 'opentofu' && hasTofu ? (['opentofu'] as const) : views) {
        const b = oracle('before', view, root);
        const a = oracle('after', view, root);
        if (!b.loads) {
          // not loadable here before the fix either (e.g. a Terragrunt unit)
          notLoading.push(`${root}: ${b.error ?? ''}`);
          continue;
        }
        providerChecked++;
        const where = hasTofu ? `${root} (${view})` : root;
        if (!a.loads) {
          providerProblems.push(`${where}: no longer loads: ${a.error ?? ''}`);
          continue;
        }
        const sb = [...b.providers.keys()].sort().join(' ');
        const sa = [...a.providers.keys()].sort().join(' ');
        if (sb !== sa) providerProblems.push(`${where}: providers ${sb} → ${sa}`);
        for (const [addr, cs] of b.providers) {
          if (!isRoot || !concerns(addr)) continue;
          if (bounded(cs) && !bounded(a.providers.get(addr) ?? [])) {
            const kind = before.roots.find((r) => r.path === root)?.kind ?? 'module';
            unboundedRoots.push(`${where} (${kind}): ${addr}`);
          }
        }
      }
    }
    // rescan: this fix's finding gone, nothing new in the files it edits
    const k = `${f.rule}\0${f.file}`;
    // (a finding the first pass's edits caused, fixed by the second pass, is in neither count)
    const remaining = (cAfter.get(k) ?? 0) - Math.max(0, (cBefore.get(k) ?? 0) - (fixedCount.get(k) ?? 0));
    const newHere = files.flatMap((x) => newByFile.get(x) ?? []);
    const newInRoots = result.newFindings.filter(
      (n) => n.ruleId === 'root-module-unbounded' && roots.includes(n.module ?? path.posix.dirname(n.file)),
    );
    const newAll = [...new Set([...newHere, ...newInRoots])];

    result.fixes.push({
      input: name,
      rule: f.rule,
      file: f.file,
      line: f.line,
      description: f.description,
      files: edited,
      diff,
      roots,
      checks: {
        gitApply: { ok: gitApplyOk, detail: gitApplyOk ? undefined : check.stderr.trim() },
        sameAsInPlace: { ok: differing.length === 0, detail: differing.join(', ') || undefined },
        fmt: { ok: fmtBad.length === 0, detail: fmtBad.join(', ') || undefined },
        providers:
          providerChecked === 0
            ? {
                ok: null,
                detail: `does not load before the fix either: ${notLoading.slice(0, 2).join('; ')}`,
              }
            : { ok: providerProblems.length === 0, detail: providerProblems.join('; ') || undefined },
        unbounded:
          (providerChecked === 0 || roots.length === 0) && newInRoots.length === 0
            ? { ok: null }
            : {
                ok: unboundedRoots.length === 0 && newInRoots.length === 0,
                detail:
                  [
                    ...unboundedRoots,
                    ...newInRoots.map((n) => `rescan: ${n.file}:${n.line} ${n.message}`),
                  ].join('; ') || undefined,
              },
        rescan: {
          ok: remaining <= 0 && newAll.length === 0,
          detail:
            [
              remaining > 0 ? `${f.rule} still reported in ${f.file}` : '',
              ...newAll.map((n) => `new ${n.ruleId} ${n.file}:${n.line}`),
            ]
              .filter((x) => x !== '')
              .join('; ') || undefined,
        },
        secondRun: {
          ok: !edited.some((x) => secondFiles.has(x)) && secondFiles.size === 0,
          detail: secondFiles.size > 0 ? [...secondFiles].join(', ') : undefined,
        },
      },
    });
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// report

const CHECKS = ['gitApply', 'sameAsInPlace', 'fmt', 'providers', 'unbounded', 'rescan', 'secondRun'] as const;
const CHECK_NAMES: Record<(typeof CHECKS)[number], string> = {
  gitApply: 'git apply',
  sameAsInPlace: '= in place',
  fmt: 'fmt',
  providers: 'providers',
  unbounded: 'bounded',
  rescan: 'rescan',
  secondRun: '2nd run',
};

function passes(f: FixRecord): boolean {
  return CHECKS.every((c) => f.checks[c].ok !== false);
}

function markdown(results: InputResult[]): string {
  const fixes = results.flatMap((r) => r.fixes);
  const out: string[] = [];
  out.push('| input | origin | fixes | automatic checks passed | still needs a person |');
  out.push('|---|---|---:|---:|---:|');
  for (const r of results) {
    out.push(
      `| ${r.name} | ${r.origin} | ${r.fixes.length} | ${r.fixes.filter(passes).length} | ${r.stillNeedsPerson} |`,
    );
  }
  out.push('');
  const rules = [...new Set(fixes.map((f) => f.rule))].sort();
  out.push(`| rule | fixes | ${CHECKS.map((c) => CHECK_NAMES[c]).join(' | ')} | all checks |`);
  out.push(`|---|---:|${CHECKS.map(() => '---:').join('|')}|---:|`);
  const row = (label: string, list: FixRecord[]): string => {
    const cells = CHECKS.map((c) => {
      const ok = list.filter((f) => f.checks[c].ok === true).length;
      const na = list.filter((f) => f.checks[c].ok === null).length;
      return na > 0 ? `${ok}/${list.length - na} (${na} n/a)` : `${ok}/${list.length}`;
    });
    return `| ${label} | ${list.length} | ${cells.join(' | ')} | ${list.filter(passes).length} |`;
  };
  for (const rule of rules)
    out.push(
      row(
        `\`${rule}\``,
        fixes.filter((f) => f.rule === rule),
      ),
    );
  out.push(row('**all**', fixes));
  const failed = fixes.filter((f) => !passes(f));
  if (failed.length > 0) {
    out.push('', 'Failed checks:', '');
    for (const f of failed) {
      const why = CHECKS.filter((c) => f.checks[c].ok === false)
        .map((c) => `${CHECK_NAMES[c]}: ${f.checks[c].detail ?? ''}`)
        .join('; ');
      out.push(`- ${f.input} \`${f.file}:${f.line}\` ${f.rule}: ${why}`);
    }
  }
  const errors = results.flatMap((r) => r.errors.map((e) => `${r.name}: ${e}`));
  if (errors.length > 0) out.push('', 'Errors:', '', ...errors.map((e) => `- ${e}`));
  return out.join('\n') + '\n';
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(CLI)) usage(`${CLI} is missing: run npm run build:cli`);
  fs.mkdirSync(args.work, { recursive: true });
  const results: InputResult[] = [];
  const inputs: { name: string; origin: string; prepare: (dir: string) => void }[] = [];
  if (args.corpus !== null) {
    const corpus = args.corpus;
    for (const f of fs
      .readdirSync(corpus)
      .filter((x) => x.endsWith('.tar.gz'))
      .sort()) {
      inputs.push({
        name: f.replace(/\.tar\.gz$/, ''),
        origin: 'corpus (SOURCES.md)',
        prepare: (dir) => {
          const t = spawnSync('tar', ['-xzf', path.join(corpus, f), '-C', dir]);
          if (t.status !== 0) throw new Error(`tar ${f}: ${t.stderr.toString()}`);
        },
      });
    }
  }
  for (const repo of args.repos) {
    const abs = path.resolve(repo);
    if (!fs.statSync(abs, { throwIfNoEntry: false })?.isDirectory()) usage(`${repo} is not a directory`);
    const head = run('git', ['rev-parse', 'HEAD'], abs);
    inputs.push({
      name: path.basename(abs),
      origin: head.status === 0 ? head.stdout.trim().slice(0, 12) : 'not a git checkout',
      prepare: (dir) => copyTree(abs, dir),
    });
  }
  for (const input of inputs) {
    const started = Date.now();
    process.stderr.write(`fix-study: ${input.name} …`);
    try {
      const r = studyInput(input.name, input.origin, input.prepare, args.work);
      results.push(r);
      process.stderr.write(
        ` ${r.fixes.length} fixes, ${r.fixes.filter(passes).length} pass (${Math.round((Date.now() - started) / 1000)} s)\n`,
      );
    } catch (e) {
      process.stderr.write(` failed: ${(e as Error).message}\n`);
      results.push({
        name: input.name,
        origin: input.origin,
        fixes: [],
        stillNeedsPerson: 0,
        newFindings: [],
        errors: [(e as Error).message],
      });
    }
  }
  const cliRoot = path.dirname(path.dirname(CLI));
  const described = run('git', ['describe', '--always', '--dirty'], cliRoot);
  const head = described.status === 0 ? described.stdout.trim() : cliRoot;
  const md = `tfguard ${head}, ${new Date().toISOString().slice(0, 10)}\n\n${markdown(results)}`;
  if (args.markdown !== null) fs.writeFileSync(args.markdown, md);
  else process.stdout.write(md);
  if (args.json !== null) fs.writeFileSync(args.json, JSON.stringify(results, null, 2) + '\n');
  if (args.diffs !== null) {
    const text = results
      .flatMap((r) => r.fixes)
      .map(
        (f, i) =>
          `### ${i + 1}. ${f.input} ${f.file}:${f.line} ${f.rule}: ${f.description}\n` +
          `roots: ${f.roots.join(', ') || '(none)'}\n` +
          CHECKS.filter((c) => f.checks[c].ok !== true)
            .map(
              (c) =>
                `${CHECK_NAMES[c]}: ${f.checks[c].ok === null ? 'n/a' : 'FAILED'} ${f.checks[c].detail ?? ''}\n`,
            )
            .join('') +
          f.diff +
          '\n',
      )
      .join('\n');
    fs.writeFileSync(args.diffs, text);
  }
  process.stderr.write(`fix-study: work files in ${args.work}\n`);
  const all = results.flatMap((r) => r.fixes);
  process.exit(all.every(passes) && results.every((r) => r.errors.length === 0) ? 0 : 1);
}

main();
