/**
 * The real `terraform` CLI as a test oracle, offline: a filesystem mirror of fake provider
 * packages, a CLI configuration that installs only from it, and a runner.
 *
 *   const mirror = await withMirror([{ source: 'hashicorp/fake', version: '1.0.0' }]);
 *   await writeTree(work, { 'main.tf': requiredProvidersTf({ fake: { source: 'hashicorp/fake', version: '~> 1.0' } }) });
 *   const r = await runTerraform(['init', '-backend=false', '-input=false', '-no-color'], work, mirror.env);
 *   readLockFile(work).get('registry.terraform.io/hashicorp/fake')?.version;
 *
 * Packages are zips named `terraform-provider-TYPE_VERSION_OS_ARCH.zip` (packed layout) or
 * directories `VERSION/OS_ARCH/` (unpacked layout) under `MIRROR/HOST/NAMESPACE/TYPE/`; a package
 * only needs an executable whose name starts with `terraform-provider-TYPE` for `init` to succeed.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { terraformStatus } from './external';
import { S_IFDIR, S_IFREG, writeZip as writeRawZip } from './zip-writer';
import { hclQuoted } from '../../src/lockfile';

// ---------------------------------------------------------------------------------------------
// Provider package zips (the test zip writer, test/support/zip-writer.ts)
// ---------------------------------------------------------------------------------------------

export interface ZipEntry {
  /** Path inside the zip with `/` separators; a name ending in `/` is a directory entry. */
  name: string;
  data?: Buffer | string;
  /** Unix permission bits (default 0o644 for files, 0o755 for directories). */
  mode?: number;
}

/** Builds a provider package zip: Unix modes, as Terraform providers are released. */
export function writeZip(entries: ZipEntry[], options: { compress?: boolean } = {}): Buffer {
  return writeRawZip(
    entries.map((entry) => {
      const isDir = entry.name.endsWith('/');
      const data = isDir ? undefined : (entry.data ?? '');
      return {
        name: entry.name,
        ...(data === undefined ? {} : { data }),
        method:
          options.compress === true && !isDir && Buffer.byteLength(data ?? '') > 0 ? 'deflate' : 'store',
        unixMode: (entry.mode ?? (isDir ? 0o755 : 0o644)) | (isDir ? S_IFDIR : S_IFREG),
        dosAttributes: isDir ? 0x10 : 0,
      } as const;
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Provider mirror
// ---------------------------------------------------------------------------------------------

/** Terraform's name for the platform this process runs on, e.g. `linux_amd64`. */
export function currentPlatform(): string {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const arch = ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' } as Record<string, string>)[
    process.arch
  ];
  return `${os}_${arch ?? process.arch}`;
}

export interface ProviderPackage {
  /** `TYPE`, `NAMESPACE/TYPE` or `HOST/NAMESPACE/TYPE`; default namespace `hashicorp`, host `registry.terraform.io`. */
  source: string;
  version: string;
  /** `OS_ARCH`; default: the current platform. */
  platform?: string;
  /** `packed` (default): a zip; `unpacked`: a directory `VERSION/OS_ARCH/`. */
  layout?: 'packed' | 'unpacked';
  /** Package contents; default one executable `terraform-provider-TYPE_vVERSION`. */
  files?: ZipEntry[];
}

/** `hashicorp/aws` → `registry.terraform.io/hashicorp/aws`. */
export function fullSource(source: string): string {
  const parts = source.split('/');
  if (parts.length === 1) return `registry.terraform.io/hashicorp/${source}`;
  if (parts.length === 2) return `registry.terraform.io/${source}`;
  return source;
}

export interface Mirror {
  /** Private temp directory holding the mirror and the CLI config (and free for work dirs). */
  dir: string;
  mirrorDir: string;
  cliConfigPath: string;
  /** Environment for `runTerraform` that makes `init` install only from this mirror. */
  env: Record<string, string>;
  /** Where a package of this mirror lives (zip file or unpacked directory). */
  packagePath(pkg: ProviderPackage): string;
  /** Adds packages after creation. */
  add(packages: ProviderPackage[]): Promise<void>;
  cleanup(): Promise<void>;
}

function packageFiles(pkg: ProviderPackage): ZipEntry[] {
  if (pkg.files !== undefined) return pkg.files;
  const type = fullSource(pkg.source).split('/')[2] as string;
  return [{ name: `terraform-provider-${type}_v${pkg.version}`, data: '#!/bin/sh\nexit 1\n', mode: 0o755 }];
}

function locate(mirrorDir: string, pkg: ProviderPackage): string {
  const [host, namespace, type] = fullSource(pkg.source).split('/') as [string, string, string];
  const platform = pkg.platform ?? currentPlatform();
  const base = join(mirrorDir, host, namespace, type);
  return pkg.layout === 'unpacked'
    ? join(base, pkg.version, platform)
    : join(base, `terraform-provider-${type}_${pkg.version}_${platform}.zip`);
}

async function writePackage(mirrorDir: string, pkg: ProviderPackage): Promise<void> {
  const path = locate(mirrorDir, pkg);
  const files = packageFiles(pkg);
  if (pkg.layout === 'unpacked') {
    for (const f of files) {
      const target = join(path, ...f.name.split('/'));
      if (f.name.endsWith('/')) {
        await mkdir(target, { recursive: true });
        continue;
      }
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, f.data ?? '');
      chmodSync(target, f.mode ?? 0o644);
    }
    return;
  }
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, writeZip(files));
}

/** Creates a temp directory with a filesystem mirror of `packages` and a CLI config using it. */
export async function withMirror(packages: ProviderPackage[]): Promise<Mirror> {
  const dir = await mkdtemp(join(tmpdir(), 'tfguard-tf-'));
  const mirrorDir = join(dir, 'mirror');
  await mkdir(mirrorDir, { recursive: true });
  const cliConfigPath = join(dir, 'cli.tfrc');
  await writeFile(
    cliConfigPath,
    `provider_installation {\n  filesystem_mirror {\n    path = ${hclQuoted(mirrorDir)}\n  }\n}\n`,
  );
  for (const pkg of packages) await writePackage(mirrorDir, pkg);
  return {
    dir,
    mirrorDir,
    cliConfigPath,
    env: { TF_CLI_CONFIG_FILE: cliConfigPath },
    packagePath: (pkg) => locate(mirrorDir, pkg),
    add: async (more) => {
      for (const pkg of more) await writePackage(mirrorDir, pkg);
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------------------------
// Running terraform
// ---------------------------------------------------------------------------------------------

/** Absolute path of a working `terraform` on PATH, or null (test/support/external.ts finds it). */
export function terraformBinary(): string | null {
  const status = terraformStatus();
  return status.ok ? status.value : null;
}

/**
 * The terraform binary, or an error that says why the oracle tests cannot run. Suites that use
 * terraform are wrapped in `describeWithTerraform`, so this only throws outside such a block.
 */
export function requireTerraform(): string {
  const status = terraformStatus();
  if (!status.ok) throw new Error(status.reason);
  return status.value;
}

export interface TerraformResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout + stderr. */
  output: string;
  timedOut: boolean;
}

/** Variables that would make terraform use anything but the test's own config and directories. */
const SCRUBBED =
  /^(TF_CLI_CONFIG_FILE|TF_PLUGIN_CACHE_DIR|TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE|TF_DATA_DIR|TF_CLI_ARGS.*|TF_LOG.*|TF_WORKSPACE|TF_INPUT|TF_TOKEN_.*|TF_REGISTRY_.*|TF_VAR_.*)$/;

/**
 * Runs terraform in `cwd` with a scrubbed environment plus `env` (pass `mirror.env`), never
 * interactive, never phoning home. Resolves (never rejects) with the exit code and output.
 */
export function runTerraform(
  args: string[],
  cwd: string,
  env: Record<string, string | undefined> = {},
  options: {
    timeoutMs?: number;
    /** Written to stdin (e.g. expressions for `terraform console`). */ input?: string;
  } = {},
): Promise<TerraformResult> {
  const bin = requireTerraform();
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !SCRUBBED.test(k)) merged[k] = v;
  merged.CHECKPOINT_DISABLE = '1';
  merged.TF_IN_AUTOMATION = '1';
  merged.TF_INPUT = '0';
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete merged[k];
    else merged[k] = v;
  }
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve) => {
    const child = spawn(bin, args, {
      cwd,
      env: merged,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (options.input !== undefined && child.stdin !== null) {
      child.stdin.on('error', () => undefined); // the process may exit before reading everything
      child.stdin.end(options.input);
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    const finish = (code: number | null, extra = ''): void => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8') + extra;
      resolve({ code, stdout, stderr, output: stdout + stderr, timedOut });
    };
    child.on('error', (e) => finish(null, `\nspawn failed: ${e.message}`));
    child.on('close', (code) => finish(code));
  });
}

/** `terraform init` for a work dir, offline against `mirror`. */
export function terraformInit(
  cwd: string,
  mirror: Mirror,
  extraArgs: string[] = [],
): Promise<TerraformResult> {
  return runTerraform(['init', '-backend=false', '-input=false', '-no-color', ...extraArgs], cwd, mirror.env);
}

export { mapLimit } from '../../src/util/map-limit';

// ---------------------------------------------------------------------------------------------
// Writing configurations and reading what terraform wrote
// ---------------------------------------------------------------------------------------------

/** A `terraform { required_providers { ... } }` block; `version` omitted when undefined. */
export function requiredProvidersTf(providers: Record<string, { source: string; version?: string }>): string {
  const lines = Object.entries(providers).map(([name, p]) => {
    const version = p.version === undefined ? '' : `, version = ${hclQuoted(p.version)}`;
    return `    ${name} = { source = ${hclQuoted(p.source)}${version} }`;
  });
  return `terraform {\n  required_providers {\n${lines.join('\n')}\n  }\n}\n`;
}

/**
 * The regular files under `dir` by relative path with `/`, the inverse of `writeTree`. A directory
 * is not entered when `skip(name, parent)` holds (`parent`: its parent's relative path, '' at the
 * top), e.g. `.git` or terraform's `.terraform`.
 */
export async function readTree(
  dir: string,
  skip: (name: string, parent: string) => boolean = () => false,
): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  const walk = async (d: string): Promise<void> => {
    const parent = relative(dir, d).split(sep).join('/');
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (!skip(e.name, parent)) await walk(p);
      } else if (e.isFile()) {
        out[relative(dir, p).split(sep).join('/')] = await readFile(p);
      }
    }
  };
  await walk(dir);
  return out;
}

/** `readTree` with every file as UTF-8 text. */
export async function readTextTree(
  dir: string,
  skip?: (name: string, parent: string) => boolean,
): Promise<Record<string, string>> {
  const files = await readTree(dir, skip);
  return Object.fromEntries(Object.entries(files).map(([p, b]) => [p, b.toString('utf8')]));
}

/** Writes `files` (relative paths with `/`) under `dir`, creating directories. */
export async function writeTree(dir: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, data] of Object.entries(files)) {
    const target = join(dir, ...rel.split('/'));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, data);
  }
}

export interface LockEntry {
  version: string | null;
  constraints: string | null;
  hashes: string[];
}

/** HCL string-literal unescape for what terraform writes in a lock file. */
function unquote(lit: string): string {
  return JSON.parse(lit.replace(/\$\$\{/g, '${').replace(/%%\{/g, '%{')) as string;
}

/**
 * Reads the `.terraform.lock.hcl` terraform wrote in `dir` (its own canonical layout, so a small
 * line-based reader suffices): source address → version, constraints, hashes. Empty when absent.
 */
export function readLockFile(dir: string): Map<string, LockEntry> {
  const out = new Map<string, LockEntry>();
  const path = join(dir, '.terraform.lock.hcl');
  if (!existsSync(path)) return out;
  const text = readFileSync(path, 'utf8');
  const blockRe = /^provider ("(?:[^"\\]|\\.)*") \{\n([\s\S]*?)^\}/gm;
  for (const m of text.matchAll(blockRe)) {
    const body = m[2] as string;
    const attr = (name: string): string | null => {
      const a = new RegExp(`^\\s*${name}\\s*=\\s*("(?:[^"\\\\]|\\\\.)*")\\s*$`, 'm').exec(body);
      return a === null ? null : unquote(a[1] as string);
    };
    const hashes = [...body.matchAll(/^\s*("(?:h1|zh):[^"]*"),?\s*$/gm)].map((h) => unquote(h[1] as string));
    out.set(unquote(m[1] as string), { version: attr('version'), constraints: attr('constraints'), hashes });
  }
  return out;
}
