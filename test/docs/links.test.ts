/**
 * Every relative link of the Markdown documentation (README.md, CONTRIBUTING.md, docs/**) names a
 * file or directory of the repository: a helper that moves (test/helpers → test/support) must take
 * its links along.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const REPO = resolve(__dirname, '..', '..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

/** `[text](target)` targets that are paths (no scheme, not a fragment), without their fragment. */
function relativeLinks(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1] as string;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    const path = target.split('#')[0] as string;
    if (path !== '') out.push(path);
  }
  return out;
}

test('every relative link in the documentation names a file that exists', () => {
  const files = [
    join(REPO, 'README.md'),
    join(REPO, 'CONTRIBUTING.md'),
    ...markdownFiles(join(REPO, 'docs')),
  ];
  const broken: string[] = [];
  for (const file of files) {
    for (const link of relativeLinks(readFileSync(file, 'utf8'))) {
      if (!existsSync(resolve(dirname(file), decodeURIComponent(link)))) {
        broken.push(`${file.slice(REPO.length + 1)}: ${link}`);
      }
    }
  }
  expect(files.length).toBeGreaterThan(10);
  expect(broken).toEqual([]);
});
