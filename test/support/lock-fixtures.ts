/**
 * Small builders for lock-file tests: lock text in Terraform's own layout, and line lookups so
 * expectations name lines by content rather than by counting.
 */
import { createHash } from 'node:crypto';

export interface LockEntrySpec {
  source: string;
  version: string;
  constraints?: string;
  hashes?: string[];
}

/** A lock file exactly as `terraform init` lays it out. */
export function lockText(entries: LockEntrySpec[]): string {
  const blocks = entries.map((e) => {
    const lines = [`provider "${e.source}" {`];
    const pad = e.constraints === undefined ? '' : '    ';
    lines.push(`  version${pad} = "${e.version}"`);
    if (e.constraints !== undefined) lines.push(`  constraints = "${e.constraints}"`);
    if (e.hashes !== undefined) {
      lines.push('  hashes = [');
      for (const h of e.hashes) lines.push(`    "${h}",`);
      lines.push('  ]');
    }
    lines.push('}');
    return lines.join('\n');
  });
  return `# This file is maintained automatically by "terraform init".\n# Manual edits may be lost in future updates.\n\n${blocks.join('\n\n')}\n`;
}

/** 1-based line of the first line containing `needle` (after line `after`). */
export function lineOf(text: string, needle: string, after = 0): number {
  const lines = text.split('\n');
  for (let i = after; i < lines.length; i++) if ((lines[i] as string).includes(needle)) return i + 1;
  throw new Error(`"${needle}" not found in:\n${text}`);
}

/** A well-formed but arbitrary `h1:` / `zh:` hash derived from a seed. */
export function fakeH1(seed: string): string {
  return `h1:${createHash('sha256').update(`h1 ${seed}`).digest('base64')}`;
}
export function fakeZh(seed: string): string {
  return `zh:${createHash('sha256').update(`zh ${seed}`).digest('hex')}`;
}

export function tf(providers: Record<string, { source: string; version?: string }>, extra = ''): string {
  const lines = Object.entries(providers).map(
    ([name, p]) =>
      `    ${name} = { source = "${p.source}"${p.version === undefined ? '' : `, version = "${p.version}"`} }`,
  );
  return `terraform {\n  required_providers {\n${lines.join('\n')}\n  }\n}\n${extra}`;
}
