/**
 * Writing `.terraform.lock.hcl` exactly as Terraform writes it (hashicorp/terraform
 * internal/depsfile/locks_file.go `SaveLocksToFile`, with hclwrite's formatting): the two header
 * comment lines, then for each provider, sorted by hostname, namespace and type (`Provider.LessThan`),
 * a blank line and one block:
 *
 * ```hcl
 * provider "registry.terraform.io/hashicorp/aws" {
 *   version     = "5.9.0"
 *   constraints = "~> 5.0"
 *   hashes = [
 *     "h1:...",
 *     "zh:...",
 *   ]
 * }
 * ```
 *
 * `constraints` is left out when empty, `hashes` when there are none; hashes are deduplicated and
 * sorted (`depsfile.NewProviderLock`), one per line with a trailing comma. hclwrite aligns the `=` of
 * consecutive single-line arguments (`version` and `constraints`), not of the multi-line `hashes`.
 * OpenTofu writes the same layout with "tofu init" in the header. Checked byte for byte against the
 * files terraform 1.11 writes (test/lockfile/write.test.ts).
 */
import type { Engine } from '../model';
import { compareUtf8 } from './hash';

/** What one provider block of a lock file holds. */
export interface LockEntryData {
  /** Fully-qualified, normalized `HOST/NAMESPACE/TYPE`. */
  source: string;
  /** One exact version in normalized form. */
  version: string;
  /** Normalized constraints; null or `''` leaves the argument out. */
  constraints: string | null;
  hashes: readonly string[];
}

/** The header comment Terraform (or OpenTofu) writes at the top of every lock file. */
export function lockFileHeader(engine: Engine): string {
  const cli = engine === 'opentofu' ? 'tofu' : 'terraform';
  return `# This file is maintained automatically by "${cli} init".\n# Manual edits may be lost in future updates.\n`;
}

/** An HCL quoted string as hclwrite's `TokensForValue` writes it. */
export function hclQuoted(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] as string;
    const next = s[i + 1];
    const code = ch.charCodeAt(0);
    if (ch === '\\') out += '\\\\';
    else if (ch === '"') out += '\\"';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if ((ch === '$' || ch === '%') && next === '{') out += ch + ch;
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `"${out}"`;
}

/** Terraform's provider order: hostname, then namespace, then type, each compared byte-wise. */
export function compareProviderSources(a: string, b: string): number {
  const pa = a.split('/');
  const pb = b.split('/');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const c = compareUtf8(pa[i] ?? '', pb[i] ?? '');
    if (c !== 0) return c;
  }
  return 0;
}

/** Hashes as a lock entry keeps them: each once, sorted byte-wise. */
export function normalizeHashes(hashes: Iterable<string>): string[] {
  return [...new Set(hashes)].sort(compareUtf8);
}

/**
 * The full text of a lock file holding `entries` (in any order; one entry per source), as
 * `terraform init` / `terraform providers lock` write it.
 */
export function formatLockFile(entries: readonly LockEntryData[], engine: Engine = 'terraform'): string {
  const seen = new Set<string>();
  for (const e of entries) {
    if (seen.has(e.source)) throw new Error(`two lock entries for ${e.source}`);
    seen.add(e.source);
  }
  const sorted = [...entries].sort((a, b) => compareProviderSources(a.source, b.source));
  let out = lockFileHeader(engine);
  for (const e of sorted) {
    const hasConstraints = e.constraints !== null && e.constraints !== '';
    out += `\nprovider ${hclQuoted(e.source)} {\n`;
    out += `  ${hasConstraints ? 'version    ' : 'version'} = ${hclQuoted(e.version)}\n`;
    if (hasConstraints) out += `  constraints = ${hclQuoted(e.constraints as string)}\n`;
    const hashes = normalizeHashes(e.hashes);
    if (hashes.length > 0) {
      out += '  hashes = [\n';
      for (const h of hashes) out += `    ${hclQuoted(h)},\n`;
      out += '  ]\n';
    }
    out += '}\n';
  }
  return out;
}
