/**
 * Mutated corpus files: random truncations, bad tokens injected into resource bodies, duplicated
 * arguments, deleted characters. For every mutant the fast path (`extract` with the loader's
 * projection) must give exactly what the full hcl2json parse gives — the same error message, line
 * and column when it is broken — and whenever the verifier proves a mutant well-formed, hcl2json
 * must accept it too (the soundness the fast path rests on).
 */
import { scanHcl, verifyHcl } from '../../../src/hcl';
import { LOADER_PROJECTION } from '../../../src/modules';
import { mapLimit } from '../../../src/util/map-limit';
import { corpusFiles, robustnessArchives } from '../../support/corpus';
import { projected, referenceParser, render } from '../../support/hcl2json';
import { rng } from '../../support/random';
import { HclParser } from '../../../src/hcl';
import { describeWithCorpus } from '../../support/external';

const BAD_TOKENS = [
  '}',
  '{',
  '"',
  '${',
  '%{',
  '::',
  ';',
  '&',
  '|',
  '~',
  "'",
  '`',
  '@',
  '$',
  '\\',
  '= =',
  '=',
  ',',
  '.',
  '...',
  '[',
  ']',
  '(',
  ')',
  '-true',
  '!1',
  '<<EOT\n',
  '\r',
  '\t',
  '\u00a0',
  'é',
  '#',
  '/*',
  '*/',
  '1.2.3',
  'x.0.1',
  '\n',
  '"\\q"',
  ' for ',
  ' in ',
  '? :',
  '=>',
  '\nx = 1\n',
  '\nx {\n',
  ' "a" ',
];

interface Mutant {
  name: string;
  text: string;
}

function mutants(files: Map<string, Buffer>, count: number, seed: number): Mutant[] {
  const random = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  // Small and medium files keep the reference parses quick.
  const candidates = [...files].filter(([p, c]) => p.endsWith('.tf') && c.length > 200 && c.length < 6000);
  const out: Mutant[] = [];
  while (out.length < count && candidates.length > 0) {
    const [path, content] = pick(candidates);
    const text = content.toString('utf8');
    const resources = scanHcl(path, text).body.blocks.filter(
      (b) => b.type === 'resource' || b.type === 'module',
    );
    const kind = Math.floor(random() * 4);
    if (kind === 0 || resources.length === 0) {
      const at = Math.floor(random() * text.length);
      out.push({ name: `${path} truncated at ${at}`, text: text.slice(0, at) });
      continue;
    }
    const block = pick(resources);
    const at = block.start + Math.floor(random() * (block.end - block.start));
    if (kind === 1) {
      const token = pick(BAD_TOKENS);
      out.push({
        name: `${path} +${JSON.stringify(token)} at ${at}`,
        text: text.slice(0, at) + token + text.slice(at),
      });
    } else if (kind === 2) {
      const attr = block.body.attributes[0];
      if (attr === undefined) continue;
      const line = text.slice(attr.start, attr.end);
      out.push({
        name: `${path} duplicated ${attr.name}`,
        text: text.slice(0, block.end - 1) + line + '\n' + text.slice(block.end - 1),
      });
    } else {
      out.push({ name: `${path} -char at ${at}`, text: text.slice(0, at) + text.slice(at + 1) });
    }
  }
  return out;
}

const fast = new HclParser({ workers: 1 });
const reference = referenceParser();

afterAll(async () => {
  await fast.close();
  await reference.close();
});

describeWithCorpus('mutated corpus files', () => {
  it('mutated corpus files: the fast path gives the full parse verdict, message and position', async () => {
    const all: Mutant[] = [];
    for (const [i, archive] of robustnessArchives().entries()) {
      if (archive.startsWith('hashicorp')) continue;
      all.push(...mutants(await corpusFiles(archive), 50, 1000 + i));
    }
    expect(all.length).toBe(250);
    let proven = 0;
    let broken = 0;
    const mismatches: string[] = [];
    await mapLimit(all, 4, async (m) => {
      const content = Buffer.from(m.text, 'utf8');
      const [got, ref] = await Promise.all([
        fast.extract('main.tf', content, LOADER_PROJECTION),
        reference.parse('main.tf', content),
      ]);
      const want = projected(ref, LOADER_PROJECTION);
      const [a, b] = [render(got), render(want)];
      if (a !== b) {
        let d = 0;
        while (a[d] === b[d]) d++;
        const at = Math.max(0, d - 150);
        mismatches.push(`${m.name}: …${a.slice(at, d + 80)} != …${b.slice(at, d + 80)}`);
      }
      if (!ref.ok) broken++;
      if (verifyHcl(m.text).ok) {
        proven++;
        if (!ref.ok) {
          mismatches.push(`${m.name}: proven well-formed, but hcl2json says ${ref.error.message}`);
        }
      }
    });
    expect(mismatches).toEqual([]);
    // The mutations exercise both verdicts.
    expect(broken).toBeGreaterThan(100);
    expect(proven).toBeGreaterThan(20);
  }, 180_000);
});
