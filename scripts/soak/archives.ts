/**
 * The archives of a soak round (scripts/soak.ts), generated from a seed: a few repositories with
 * several uploads each (small realistic Terraform trees whose builds drift: provider constraints
 * bumped, a lock file added, dropped or out of date, modules and environments added), a share of
 * hostile archives, and optionally real corpus archives. Every archive's bytes are distinct (each
 * names its build), so no two share an API scan id.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { buildTar } from '../../test/support/archive';
import { rng } from '../../test/support/random';
import { writeZip } from '../../test/support/zip-writer';
import type { Expectation } from './invariants';

export type HostileKind = 'traversal' | 'bomb' | 'corrupt-gzip' | 'symlink-outside' | 'oversize';

export const HOSTILE_KINDS: readonly HostileKind[] = [
  'traversal',
  'bomb',
  'corrupt-gzip',
  'symlink-outside',
  'oversize',
];

/** The rejection each kind must get (docs/security.md §4). A gzip stream damaged in the middle
 * fails its data check, or ends early when the damage reads as an end of stream. */
export const HOSTILE_CODES: Record<HostileKind, readonly string[]> = {
  traversal: ['path-traversal'],
  bomb: ['compression-ratio'],
  'corrupt-gzip': ['corrupt-archive', 'truncated-archive'],
  'symlink-outside': ['link-outside'],
  oversize: ['total-too-large'],
};

export type ArchiveFormat = 'tar.gz' | 'tar' | 'zip';

export interface PlannedArchive {
  id: string;
  via: 'upload' | 'api';
  repository: string;
  /** Upload key (under `uploads/`); for API archives the key it would have had (unused). */
  key: string;
  format: ArchiveFormat;
  bytes: Buffer;
  hostile: HostileKind | null;
  expect: Expectation;
  label: string;
}

export interface PlanOptions {
  /** Repository names start with it (`soak/c8`). */
  prefix: string;
  archives: number;
  /** Repositories of generated trees (the corpus archives get one each). */
  repositories: number;
  hostileShare: number;
  /** Share of the non-hostile generated archives sent through `POST /scans` instead of S3. */
  apiShare: number;
  /** Corpus archive files (absolute paths) to include, one upload each. */
  corpus: readonly string[];
  /** The service's `TFGUARD_MAX_ARCHIVE_BYTES` (the oversize archives exceed it). */
  maxArchiveBytes: number;
  seed: number;
}

export function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

type Files = Record<string, string>;

const PROVIDERS = [
  { name: 'aws', source: 'hashicorp/aws', major: 5, minors: [20, 40, 60, 80, 95] },
  { name: 'google', source: 'hashicorp/google', major: 6, minors: [1, 5, 10, 20] },
  { name: 'random', source: 'hashicorp/random', major: 3, minors: [4, 5, 6] },
  { name: 'azurerm', source: 'hashicorp/azurerm', major: 4, minors: [1, 10, 20] },
] as const;

const MODULES = ['network', 'storage', 'iam', 'dns', 'queue', 'cache'];

function fakeHash(random: () => number): string {
  const bytes = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) bytes[i] = Math.floor(random() * 256);
  return `h1:${bytes.toString('base64')}`;
}

/** Build `build` of repository `repo`: a root module, local modules, environments, a lock file. */
function tree(repo: string, repoIndex: number, build: number, id: string, random: () => number): Files {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const providers = [PROVIDERS[repoIndex % PROVIDERS.length]!, PROVIDERS[2]!].filter(
    (p, i, all) => all.indexOf(p) === i,
  );
  const minorFor = new Map(
    providers.map((p) => [p.name, p.minors[Math.min(p.minors.length - 1, Math.floor(build / 4))]!]),
  );
  // Some builds forget a constraint (a finding), most pin a minor.
  const unpinned = random() < 0.15 ? providers[0]!.name : null;
  const required = providers
    .map((p) =>
      unpinned === p.name
        ? `    ${p.name} = {\n      source = "${p.source}"\n    }\n`
        : `    ${p.name} = {\n      source  = "${p.source}"\n      version = "~> ${p.major}.${minorFor.get(p.name)}"\n    }\n`,
    )
    .join('');
  const modules = MODULES.slice(0, 1 + ((repoIndex + build) % 3));
  const files: Files = {
    'README.md': `# ${repo}\n\nBuild ${build} (${id}).\n`,
    'versions.tf': `terraform {\n  required_version = ">= 1.${5 + (build % 4)}"\n  required_providers {\n${required}  }\n}\n`,
    'main.tf':
      `provider "${providers[0]!.name}" {\n${providers[0]!.name === 'aws' ? '  region = "eu-west-1"\n' : ''}}\n\n` +
      modules
        .map((m) => `module "${m}" {\n  source = "./modules/${m}"\n  name   = var.name\n}\n`)
        .join('\n') +
      `\nresource "random_id" "suffix" {\n  byte_length = ${4 + (build % 4)}\n}\n`,
    'variables.tf': `variable "name" {\n  type    = string\n  default = "${repo.replace(/[^a-z0-9]/g, '-')}"\n}\n`,
    'outputs.tf': `output "suffix" {\n  value = random_id.suffix.hex\n}\n`,
  };
  for (const m of modules) {
    files[`modules/${m}/versions.tf`] =
      `terraform {\n  required_providers {\n    ${providers[0]!.name} = {\n      source  = "${providers[0]!.source}"\n      version = ">= ${providers[0]!.major}.0"\n    }\n  }\n}\n`;
    files[`modules/${m}/main.tf`] =
      `variable "name" {\n  type = string\n}\n\nresource "random_pet" "${m}" {\n  prefix = var.name\n}\n`;
  }
  for (const env of ['dev', 'staging', 'prod'].slice(0, 1 + (build % 3))) {
    files[`envs/${env}/main.tf`] =
      `module "stack" {\n  source = "../.."\n  name   = "${env}"\n}\n` +
      (random() < 0.3
        ? `\nmodule "vpc" {\n  source  = "terraform-aws-modules/vpc/aws"\n  version = "~> 5.${pick([1, 5, 8])}"\n}\n`
        : '');
  }
  // A lock file in most builds; sometimes one that no longer matches the constraints.
  if (random() < 0.8) {
    const stale = random() < 0.2;
    files['.terraform.lock.hcl'] =
      '# This file is maintained automatically by "terraform init".\n# Manual edits may be lost in future updates.\n\n' +
      providers
        .map((p) => {
          const minor = stale ? p.minors[0]! - 1 : minorFor.get(p.name)!;
          return (
            `provider "registry.terraform.io/${p.source}" {\n  version     = "${p.major}.${minor}.${Math.floor(random() * 5)}"\n` +
            `  constraints = "~> ${p.major}.${minorFor.get(p.name)}"\n  hashes = [\n    "${fakeHash(random)}",\n  ]\n}\n`
          );
        })
        .join('\n');
  }
  return files;
}

async function pack(files: Files, format: ArchiveFormat): Promise<Buffer> {
  const entries = Object.entries(files);
  if (format === 'zip')
    return writeZip(entries.map(([name, data]) => ({ name, data, method: 'deflate' as const })));
  const tar = await buildTar(entries.map(([name, data]) => ({ name, data })));
  return format === 'tar' ? tar : gzipSync(tar);
}

async function hostileArchive(
  kind: HostileKind,
  files: Files,
  maxArchiveBytes: number,
  random: () => number,
): Promise<Buffer> {
  const entries = Object.entries(files).map(([name, data]) => ({ name, data }));
  switch (kind) {
    case 'traversal':
      return gzipSync(await buildTar([...entries, { name: '../../../etc/cron.d/tfguard.tf', data: 'x' }]));
    case 'bomb':
      // 8 MiB of zeros in one file: ~8 kB compressed, far beyond the 200:1 ratio.
      return gzipSync(
        await buildTar([...entries, { name: 'generated/blob.tf', data: Buffer.alloc(8 << 20) }]),
      );
    case 'corrupt-gzip': {
      const bytes = gzipSync(await buildTar(entries));
      const at = Math.floor(bytes.length * (0.3 + random() * 0.4));
      for (let i = at; i < Math.min(bytes.length - 8, at + 48); i++) bytes[i] = Math.floor(random() * 256);
      return bytes;
    }
    case 'symlink-outside':
      return gzipSync(
        await buildTar([
          ...entries,
          { name: 'modules/shared.tf', type: 'symlink', linkname: '../../../../etc/passwd' },
        ]),
      );
    case 'oversize':
      // Larger than the service accepts: rejected from its size, never downloaded.
      return randomBytes(maxArchiveBytes + 64 * 1024);
  }
}

/**
 * The round's archives in upload order (builds interleaved across repositories, as CI would
 * produce them): index = upload sequence.
 */
export async function planArchives(options: PlanOptions): Promise<PlannedArchive[]> {
  const random = rng(options.seed);
  const corpus = options.corpus.slice(0, options.archives);
  const generated = options.archives - corpus.length;
  const repositories = Math.max(1, Math.min(options.repositories, generated));
  const hostileCount = Math.min(generated, Math.round(options.archives * options.hostileShare));
  // Which generated archives are hostile (kinds round-robin, so every kind appears), and which go
  // through the API.
  const positions = shuffle(
    Array.from({ length: generated }, (_, i) => i),
    random,
  );
  const hostileAt = new Map<number, HostileKind>();
  positions
    .slice(0, hostileCount)
    .forEach((p, i) => hostileAt.set(p, HOSTILE_KINDS[i % HOSTILE_KINDS.length]!));
  const apiCount = Math.round((generated - hostileCount) * options.apiShare);
  const apiAt = new Set(positions.slice(hostileCount, hostileCount + apiCount));

  const out: PlannedArchive[] = [];
  const builds = new Array<number>(repositories).fill(0);
  for (let i = 0; i < generated; i++) {
    const r = i % repositories;
    const build = ++builds[r]!;
    const repository = `${options.prefix}/repo-${String(r).padStart(2, '0')}`;
    const id = `r${String(r).padStart(2, '0')}-b${String(build).padStart(3, '0')}`;
    const hostile = hostileAt.get(i) ?? null;
    const format: ArchiveFormat =
      hostile !== null ? 'tar.gz' : random() < 0.1 ? 'zip' : random() < 0.1 ? 'tar' : 'tar.gz';
    const files = tree(repository, r, build, id, random);
    const bytes =
      hostile === null
        ? await pack(files, format)
        : await hostileArchive(hostile, files, options.maxArchiveBytes, random);
    out.push({
      id,
      via: apiAt.has(i) ? 'api' : 'upload',
      repository,
      key: `uploads/${repository}/build-${String(build).padStart(3, '0')}.${format}`,
      format,
      bytes,
      hostile,
      expect:
        hostile === null ? { status: 'complete' } : { status: 'rejected', codes: HOSTILE_CODES[hostile] },
      label: hostile === null ? `tree ${format}` : `hostile ${hostile}`,
    });
  }
  // The corpus archives, spread through the upload order.
  for (const file of corpus) {
    const name = file.slice(file.lastIndexOf('/') + 1).replace(/\.tar\.gz$/, '');
    const repository = `${options.prefix}/corpus/${name}`;
    const at = Math.floor(random() * (out.length + 1));
    out.splice(at, 0, {
      id: `corpus-${name}`,
      via: 'upload',
      repository,
      key: `uploads/${repository}/build-001.tar.gz`,
      format: 'tar.gz',
      bytes: readFileSync(file),
      hostile: null,
      expect: { status: 'complete' },
      label: `corpus ${name}`,
    });
  }
  return out;
}
