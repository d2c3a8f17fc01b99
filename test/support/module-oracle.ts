/**
 * What `terraform` itself says about a configuration, for the differential tests of module
 * loading: run offline in a copy of the tree, it reports
 * - `terraform providers`: per module instance, every required provider with that module's
 *   constraints (explicit and implied providers, overrides applied, versions normalized);
 * - `.terraform/modules/modules.json` (written by `init`): the directory of every module instance;
 * - `terraform init`'s "Finding ... versions matching ..." lines: the combined constraints of the
 *   whole configuration per provider (what the lock file records).
 */
import { cp, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { Mirror } from './terraform';
import { runTerraform } from './terraform';

export interface TerraformView {
  /** Archive-relative module directory → (provider source → constraints, '' when none), merged over
   * every instance of that directory (they must agree). */
  modules: Map<string, Map<string, string>>;
  /** Provider display address (`hashicorp/aws`, `example.com/a/b`) → combined constraints. */
  combined: Map<string, string>;
}

/** One line of `terraform providers`' tree: its depth (each level is `│` or a space plus three
 * spaces, some of them no-break spaces) and content. */
const TREE_LINE = /^((?:│[\u00a0 ]{3}|[\u00a0 ]{4})*)(?:├── |└── )(.*)$/u;

/**
 * Parses `terraform providers` output into module instance keys (`""`, `a`, `a.b`) → (source →
 * constraints). Only the "Providers required by configuration" section is read.
 */
export function parseProvidersTree(output: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>([['', new Map()]]);
  const lines = output.split('\n');
  const start = lines.findIndex((l) => l.startsWith('Providers required by configuration:'));
  if (start === -1) throw new Error(`no provider tree in terraform output:\n${output}`);
  const path: string[] = [];
  for (const line of lines.slice(start + 2)) {
    if (line.trim() === '') break;
    const m = TREE_LINE.exec(line);
    if (m === null) throw new Error(`unexpected line in terraform providers output: ${JSON.stringify(line)}`);
    const depth = (m[1] as string).length / 4;
    const content = m[2] as string;
    path.length = depth;
    const module = /^module\.(.+)$/.exec(content);
    if (module !== null) {
      path.push(module[1] as string);
      out.set(path.join('.'), new Map());
      continue;
    }
    const p = /^provider\[([^\]]+)\](?: (.*))?$/.exec(content);
    if (p === null)
      throw new Error(`unexpected entry in terraform providers output: ${JSON.stringify(line)}`);
    (out.get(path.join('.')) as Map<string, string>).set(p[1] as string, p[2] ?? '');
  }
  return out;
}

/** The "- Finding ..." lines of `terraform init`: display address → combined constraints. */
export function parseInitFinding(output: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of output.split('\n')) {
    const latest = /^- Finding latest version of (\S+)\.\.\.$/.exec(line);
    if (latest !== null) out.set(latest[1] as string, '');
    const matching = /^- Finding (\S+) versions matching "(.*)"\.\.\.$/.exec(line);
    if (matching !== null) out.set(matching[1] as string, matching[2] as string);
  }
  return out;
}

/** Where `init` put each module instance: key → archive-relative directory. */
function moduleDirs(workRoot: string, rootPath: string): Map<string, string> {
  const out = new Map<string, string>([['', rootPath]]);
  const path = join(workRoot, rootPath, '.terraform', 'modules', 'modules.json');
  // init writes no manifest for a configuration without module calls.
  if (!existsSync(path)) return out;
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as { Modules: { Key: string; Dir: string }[] };
  for (const m of manifest.Modules) out.set(m.Key, posix.normalize(posix.join(rootPath, m.Dir)));
  return out;
}

/**
 * Runs terraform on `rootPath` inside a private copy of `tree` (so nothing terraform writes is seen
 * by tfguard). A backend or cloud block would need credentials before `terraform providers` works,
 * so the copy gets one extra override file that switches the root to the local backend; it touches
 * nothing but the backend. The root's lock file is removed so that `init` reports the combined
 * constraints instead of reusing locked versions.
 */
export async function terraformView(
  tree: string,
  rootPath: string,
  work: string,
  mirror: Mirror,
): Promise<TerraformView> {
  await cp(tree, work, { recursive: true });
  const rootDir = join(work, rootPath);
  await rm(join(rootDir, '.terraform.lock.hcl'), { force: true });
  await writeFile(join(rootDir, 'zzzz_tfguard_oracle_override.tf'), 'terraform {\n  backend "local" {}\n}\n');
  const init = await runTerraform(['init', '-input=false', '-no-color'], rootDir, mirror.env, {
    timeoutMs: 30_000,
  });
  if (!init.output.includes('Initializing provider plugins...')) {
    throw new Error(`terraform init failed before installing providers in ${rootPath}:\n${init.output}`);
  }
  const providers = await runTerraform(['providers', '-no-color'], rootDir, mirror.env, {
    timeoutMs: 30_000,
  });
  if (providers.code !== 0)
    throw new Error(`terraform providers failed in ${rootPath}:\n${providers.output}`);
  const dirs = moduleDirs(work, rootPath);
  const modules = new Map<string, Map<string, string>>();
  for (const [key, reqs] of parseProvidersTree(providers.stdout)) {
    const dir = dirs.get(key);
    if (dir === undefined) throw new Error(`module instance "${key}" is missing from modules.json`);
    const sorted = new Map([...reqs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const previous = modules.get(dir);
    if (previous !== undefined && JSON.stringify([...previous]) !== JSON.stringify([...sorted])) {
      throw new Error(
        `two instances of ${dir} disagree: ${JSON.stringify([...previous])} vs ${JSON.stringify([...sorted])}`,
      );
    }
    modules.set(dir, sorted);
  }
  return { modules, combined: parseInitFinding(init.stdout) };
}
