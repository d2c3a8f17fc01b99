/**
 * Lock-file fixes. A `.terraform.lock.hcl` belongs to Terraform, which rewrites it whole in one
 * normalized form (depsfile.SaveLocksToFile); so does `tfguard fix`: the lock entries are read,
 * changed as the findings ask, and the whole file is written again by `formatLockFile`, byte for
 * byte what `terraform providers lock` would write for the same entries.
 *
 * - `lock-provider-stale`: the entry is removed (as `terraform init` does);
 * - `lock-constraints-drift` (when the finding offers a fix): `constraints` becomes the
 *   configuration's normalized combined constraints (as `terraform providers lock` does);
 * - `lock-provider-missing`, `lock-missing`: with registry access, an entry is added for the newest
 *   version the constraints allow, with the hashes `terraform providers lock -platform=...` records;
 * - `lock-platform-coverage`: with registry access, the entry gains those hashes for its version.
 *
 * A lock file is not rewritten when it has decoding errors (`lock-parse-error`: Terraform refuses
 * it too) or holds `tfguard:` annotations (a rewrite drops comments, as Terraform's does). Entries
 * are added only to trees with no remote module calls (those may require more, and constrain the
 * version). The I/O of the registry is behind `LockFixSource` (src/lockfile `ReleaseHashResolver`).
 */
import { shortSource } from '../addrs';
import { satisfies } from '../constraints';
import { formatLockFile } from '../lockfile';
import type {
  LockAnalysis,
  LockEntryData,
  LockProviderEntry,
  ReleaseHashes,
  Resolved,
  RootLockAnalysis,
} from '../lockfile';
import type { Engine, TextEdit } from '../model';
import type { RootProvider, RootTree } from '../modules';
import type { Finding } from '../rules';
import type { SkippedFix } from './edits';

/** Registry access for lock-file additions (`ReleaseHashResolver` implements it). */
export interface LockFixSource {
  selectVersion(source: string, constraints: string): Promise<Resolved<{ version: string }>>;
  releaseHashes(
    source: string,
    version: string,
    engine: Engine,
    platforms: readonly string[],
  ): Promise<Resolved<ReleaseHashes>>;
}

/** What a lock fix reads of a root (a `RootReport` of src/report has it: fix sits below report). */
export interface LockFixRoot {
  path: string;
  providers: readonly Pick<RootProvider, 'source' | 'constraints'>[];
  remoteModules: RootTree['remoteCalls'];
}

export interface LockFixInput {
  findings: readonly Finding[];
  roots: readonly LockFixRoot[];
  lock: LockAnalysis;
  /** Platforms whose `h1:` new hashes cover: the `platforms` setting (else the current platform). */
  platforms: readonly string[];
  /** Only these rules' findings (all when absent). */
  rules?: ReadonlySet<string>;
  /** Registry access; null when it is not allowed (then nothing can be added). */
  registry: LockFixSource | null;
  /** The bytes of a file of the scanned directory, null when there is none. */
  read(file: string): Promise<Buffer | null>;
}

export interface LockFixPlan {
  /** One whole-file edit per lock file rewritten (an insertion into an empty file when created). */
  edits: Map<string, TextEdit>;
  /** Lock files the plan creates. */
  created: Set<string>;
  /** Findings the rewrites fix, with what the fix does. */
  fixed: Map<Finding, string>;
  /** Lock findings with a fix that cannot be applied here, and why. */
  skipped: SkippedFix[];
}

/** The lock rules whose findings a rewrite can fix. */
export const LOCK_FIX_RULES: ReadonlySet<string> = new Set([
  'lock-provider-stale',
  'lock-constraints-drift',
  'lock-provider-missing',
  'lock-missing',
  'lock-platform-coverage',
]);

const NEEDS_REGISTRY =
  'adding lock entries and hashes needs the registry: run with --registry (or registry = true in .tfguard.hcl)';

/** The engine whose header a lock file has (the one that wrote it), else `fallback`. */
function writerOf(content: string, fallback: Engine): Engine {
  if (content.startsWith('# This file is maintained automatically by "tofu init".')) return 'opentofu';
  if (content.startsWith('# This file is maintained automatically by "terraform init".')) return 'terraform';
  return fallback;
}

function lockPathOf(root: string): string {
  return root === '.' ? '.terraform.lock.hcl' : `${root}/.terraform.lock.hcl`;
}

/** The range of a whole file, end exclusive (an empty range for an empty or new file). */
function wholeFile(file: string, content: Buffer): TextEdit['range'] {
  const text = content.toString('utf8');
  const lines = text.split('\n');
  const last = lines[lines.length - 1] as string;
  return {
    file,
    start: { line: 1, column: 1, byte: 0 },
    end: { line: lines.length, column: [...last].length + 1, byte: content.length },
  };
}

interface Work {
  a: RootLockAnalysis;
  root: LockFixRoot;
  file: string;
  findings: Finding[];
}

/** Plans the lock-file rewrites that fix `input.findings`. Never throws for bad input. */
export async function planLockFixes(input: LockFixInput): Promise<LockFixPlan> {
  const plan: LockFixPlan = { edits: new Map(), created: new Set(), fixed: new Map(), skipped: [] };
  const wanted = input.findings.filter(
    (f) =>
      f.suppressed === undefined &&
      LOCK_FIX_RULES.has(f.ruleId) &&
      (input.rules === undefined || input.rules.has(f.ruleId)),
  );
  if (wanted.length === 0) return plan;
  const rootByPath = new Map(input.roots.map((r) => [r.path, r]));
  // The findings about each root without a lock file (by module) and about each lock file (by
  // file), in the order of `wanted`: one pass instead of a search of them per root.
  const missingFor = new Map<string, Finding[]>();
  const aboutFile = new Map<string, Finding[]>();
  for (const f of wanted) {
    const [index, key] = f.ruleId === 'lock-missing' ? [missingFor, f.module] : [aboutFile, f.file];
    if (key === null) continue;
    const list = index.get(key);
    if (list === undefined) index.set(key, [f]);
    else list.push(f);
  }
  for (const a of input.lock.roots) {
    const root = rootByPath.get(a.root);
    if (root === undefined) continue;
    const findings = (a.lockFile === null ? missingFor.get(a.root) : aboutFile.get(a.lockFile)) ?? [];
    if (findings.length === 0) continue;
    const work: Work = { a, root, file: a.lockFile ?? lockPathOf(a.root), findings };
    if (a.lockFile === null) await planCreate(work, input, plan);
    else await planRewrite(work, input, plan);
  }
  return plan;
}

/** The providers of a root that belong in its lock file, with their constraints. */
function lockable(root: Work['root']): { source: string; constraints: string | null }[] {
  return root.providers.filter((p) => !p.source.toLowerCase().startsWith('terraform.io/builtin/'));
}

/** A new entry for `source`: the version terraform init selects and the hashes providers lock records. */
async function newEntry(
  source: string,
  constraints: string | null,
  w: Work,
  input: LockFixInput,
): Promise<Resolved<{ entry: LockEntryData }>> {
  if (input.registry === null) return { ok: false, reason: NEEDS_REGISTRY };
  if (w.root.remoteModules.length > 0) {
    return {
      ok: false,
      reason:
        'the tree calls remote modules, whose requirements and constraints tfguard cannot see: run "terraform init" and commit the lock file',
    };
  }
  if (constraints === null) {
    return { ok: false, reason: 'a constraint for it is invalid, so no version can be selected' };
  }
  const selected = await input.registry.selectVersion(source, constraints);
  if (!selected.ok) return selected;
  const got = await input.registry.releaseHashes(source, selected.version, w.a.engine, input.platforms);
  if (!got.ok) return got;
  if (got.unpublished.length > 0) {
    return {
      ok: false,
      reason: `${source} ${selected.version} has no package for ${got.unpublished.join(', ')}`,
    };
  }
  return { ok: true, entry: { source, version: selected.version, constraints, hashes: got.hashes } };
}

async function planCreate(w: Work, input: LockFixInput, plan: LockFixPlan): Promise<void> {
  const fixable = w.findings.filter((f) => {
    if (f.confidence !== 'low') return true;
    plan.skipped.push({ finding: f, reason: 'the module kind is a guess, so no fix is applied' });
    return false;
  });
  if (fixable.length === 0) return;
  if ((await input.read(w.file)) !== null) {
    for (const f of fixable)
      plan.skipped.push({ finding: f, reason: `${w.file} exists but was not scanned` });
    return;
  }
  const entries: LockEntryData[] = [];
  for (const p of lockable(w.root)) {
    const made = await newEntry(p.source, p.constraints, w, input);
    if (!made.ok) {
      for (const f of fixable)
        plan.skipped.push({
          finding: f,
          reason: `cannot lock ${shortSource(p.source, w.a.engine)}: ${made.reason}`,
        });
      return;
    }
    entries.push(made.entry);
  }
  const text = formatLockFile(entries, w.a.engine);
  const range = wholeFile(w.file, Buffer.alloc(0));
  plan.edits.set(w.file, { range, text });
  plan.created.add(w.file);
  const locked = entries.map((e) => `${shortSource(e.source, w.a.engine)} ${e.version}`).join(', ');
  for (const f of fixable) plan.fixed.set(f, `write the lock file (${locked || 'no providers'})`);
}

/** Whether the locked `version` satisfies `constraints` (an empty string: no constraint). */
function lockedSatisfies(version: string | null, constraints: string): boolean {
  if (version === null) return false;
  if (constraints.trim() === '') return true;
  try {
    return satisfies(version, constraints);
  } catch {
    return false;
  }
}

function entryAt(
  entries: readonly LockProviderEntry[],
  line: number | null,
  at: (e: LockProviderEntry) => number,
) {
  return entries.find((e) => at(e) === line);
}

async function planRewrite(w: Work, input: LockFixInput, plan: LockFixPlan): Promise<void> {
  const skipAll = (reason: string): void => {
    for (const f of w.findings) plan.skipped.push({ finding: f, reason });
  };
  const lock = w.a.lock;
  const content = await input.read(w.file);
  if (lock === null || content === null || !lock.readable) {
    skipAll('the lock file cannot be read');
    return;
  }
  if (lock.errors.length > 0) {
    skipAll(`the lock file has errors (lock-parse-error, line ${lock.errors[0]?.line}); fix those first`);
    return;
  }
  const text = content.toString('utf8');
  if (/tfguard:/.test(text)) {
    skipAll("the lock file holds tfguard: annotations, which a rewrite (like terraform's) would drop");
    return;
  }
  const entries = new Map<string, LockEntryData>();
  for (const e of lock.providers) {
    if (e.source === null || e.version === null) {
      skipAll(`the lock entry at line ${e.line} cannot be decoded`);
      return;
    }
    entries.set(e.source, {
      source: e.source,
      version: e.version,
      constraints: e.constraints,
      hashes: e.hashes.map((h) => h.value),
    });
  }
  const fixed = new Map<Finding, string>();
  const skip = (f: Finding, reason: string): void => {
    plan.skipped.push({ finding: f, reason });
  };
  const locked = new Set(entries.keys());
  const missing = lockable(w.root).filter((p) => !locked.has(p.source));
  // Stale entries first: other findings about them are then settled by their removal.
  const removed = new Set<string>();
  for (const f of w.findings) {
    if (f.ruleId !== 'lock-provider-stale') continue;
    const e = entryAt(lock.providers, f.line, (x) => x.line);
    if (e === undefined) skip(f, 'no lock entry at that line');
    else {
      entries.delete(e.source as string);
      removed.add(e.source as string);
      fixed.set(f, 'remove the entry nothing requires');
    }
  }
  for (const f of w.findings) {
    if (f.ruleId === 'lock-provider-stale') continue;
    const about = lock.providers.find(
      (e) =>
        e.source !== null &&
        removed.has(e.source) &&
        f.line !== null &&
        f.line >= e.line &&
        f.line <= e.endLine,
    );
    if (about !== undefined) {
      fixed.set(f, 'the entry is removed as stale');
      continue;
    }
    switch (f.ruleId) {
      case 'lock-constraints-drift': {
        const e = entryAt(lock.providers, f.line, (x) => x.constraintsLine ?? x.line);
        const current = f.fix?.replacement;
        if (current === undefined) {
          skip(
            f,
            'remote modules add constraints tfguard cannot see: run "terraform providers lock" after "terraform init"',
          );
        } else if (e === undefined) skip(f, 'no lock entry at that line');
        else if (!lockedSatisfies(e.version, current)) {
          // Terraform never writes a constraints line its locked version does not satisfy
          // (`providers lock` refuses: "locked provider ... does not match"); that is
          // lock-version-mismatch, settled by selecting a new version.
          const cli = w.a.engine === 'opentofu' ? 'tofu' : 'terraform';
          skip(
            f,
            `the locked version ${e.version ?? '(none)'} does not satisfy "${current}" (lock-version-mismatch): ` +
              `run "${cli} init -upgrade" to select a version that does, and commit the lock file`,
          );
        } else {
          const entry = entries.get(e.source as string);
          if (entry !== undefined) entries.set(entry.source, { ...entry, constraints: current });
          fixed.set(f, f.fix?.description ?? 'record the current normalized constraints');
        }
        break;
      }
      case 'lock-provider-missing': {
        const p = missing.find((m) =>
          f.message.startsWith(`provider ${shortSource(m.source, w.a.engine)} is required`),
        );
        if (p === undefined) {
          skip(f, 'cannot tell which provider the finding is about');
          break;
        }
        const made = await newEntry(p.source, p.constraints, w, input);
        if (!made.ok) skip(f, made.reason);
        else {
          entries.set(p.source, made.entry);
          fixed.set(f, `add ${shortSource(p.source, w.a.engine)} ${made.entry.version} with its checksums`);
        }
        break;
      }
      case 'lock-platform-coverage': {
        const e = entryAt(lock.providers, f.line, (x) => x.hashesLine ?? x.line);
        if (e === undefined || e.version === null) {
          skip(f, 'no lock entry at that line');
          break;
        }
        if (/publishes no .* package for/.test(f.message)) {
          skip(
            f,
            'the registry has no package of that version for the platform: choose another version or change "platforms"',
          );
          break;
        }
        if (input.registry === null) {
          skip(f, NEEDS_REGISTRY);
          break;
        }
        const unpacked = w.a.packages
          .filter((p) => p.kind === 'unpacked' && p.source === e.source && p.version === e.version)
          .map((p) => p.platform);
        const platforms = [...new Set([...input.platforms, ...unpacked])];
        const got = await input.registry.releaseHashes(e.source as string, e.version, w.a.engine, platforms);
        if (!got.ok) {
          skip(f, got.reason);
          break;
        }
        const entry = entries.get(e.source as string);
        if (entry !== undefined)
          entries.set(entry.source, { ...entry, hashes: [...entry.hashes, ...got.hashes] });
        const covered = platforms.filter((p) => !got.unpublished.includes(p));
        fixed.set(f, `add the checksums for ${covered.join(', ')} and the zh: of every package`);
        break;
      }
      default:
        skip(f, 'no mechanical fix');
    }
  }
  if (fixed.size === 0) return;
  const next = formatLockFile([...entries.values()], writerOf(text, w.a.engine));
  if (next === text) return;
  plan.edits.set(w.file, { range: wholeFile(w.file, content), text: next });
  for (const [f, description] of fixed) plan.fixed.set(f, description);
}
