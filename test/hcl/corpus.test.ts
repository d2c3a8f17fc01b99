import { HclParser } from '../../src/hcl';
import type { HclBody } from '../../src/hcl';
import { readCorpusArchive, tarGzFiles } from '../support/corpus';
import { describeWithCorpus } from '../support/external';
import { closeReference, hcl2jsonShape, referenceParse } from '../support/hcl2json';

const parser = new HclParser();

afterAll(async () => {
  await parser.close();
  await closeReference();
});

/** (type, labels) of the top-level blocks of hcl2json's output, as sorted strings. */
function referenceHeaders(json: unknown): string[] {
  const out: string[] = [];
  // Walk obj[type][label1]...[labelN] down to the arrays of bodies.
  const walk = (node: unknown, keys: string[]): void => {
    if (Array.isArray(node)) {
      if (node.every((b) => typeof b === 'object' && b !== null && !Array.isArray(b))) {
        for (let i = 0; i < node.length; i++) out.push(JSON.stringify(keys));
      }
      return;
    }
    if (typeof node === 'object' && node !== null) {
      for (const [k, v] of Object.entries(node)) walk(v, [...keys, k]);
    }
  };
  // Top-level attributes (plain values) are not blocks: only descend into objects and arrays of
  // objects, which in a Terraform file's top level are always blocks.
  for (const [type, v] of Object.entries(json as Record<string, unknown>)) walk(v, [type]);
  return out.sort();
}

/** The regular files of a corpus archive whose names match `pattern`, in archive order. */
async function corpusEntries(archive: string, pattern: RegExp): Promise<[string, Buffer][]> {
  const files = await tarGzFiles(await readCorpusArchive(archive));
  return Object.entries(files).filter(([name]) => pattern.test(name));
}

const headers = (body: HclBody): string[] =>
  body.blocks.map((b) => JSON.stringify([b.type, ...b.labels])).sort();

describeWithCorpus('the HCL parser on the corpus', () => {
  describe.each([
    ['terraform-aws-modules_terraform-aws-vpc.tar.gz'],
    ['hashicorp_learn-terraform-provision-eks-cluster.tar.gz'],
  ])('corpus %s', (archive) => {
    it('every .tf file parses, with the top-level blocks and values hcl2json sees', async () => {
      const files = await corpusEntries(archive, /\.tf$/);
      expect(files.length).toBeGreaterThan(3);
      let blocks = 0;
      await Promise.all(
        files.map(async ([name, content]) => {
          const r = await parser.parse(name, content);
          if (!r.ok) throw new Error(`${name}: ${JSON.stringify(r.error)}`);
          const reference = await referenceParse(content.toString('utf8').replace(/^\uFEFF/, ''));
          expect({ name, headers: headers(r.file.body) }).toEqual({
            name,
            headers: referenceHeaders(reference),
          });
          // Stronger: the whole tree, regrouped the way hcl2json groups it, is hcl2json's output.
          expect(hcl2jsonShape(r.file.body)).toEqual(reference);
          blocks += r.file.body.blocks.length;
          for (const b of r.file.body.blocks) {
            expect(b.line).toBeGreaterThanOrEqual(1);
            expect(b.endLine).toBeGreaterThanOrEqual(b.line);
          }
        }),
      );
      expect(blocks).toBeGreaterThan(5);
    });
  });

  it('the lock file of the EKS example parses', async () => {
    const files = await corpusEntries(
      'hashicorp_learn-terraform-provision-eks-cluster.tar.gz',
      /\.terraform\.lock\.hcl$/,
    );
    expect(files.length).toBe(1);
    for (const [name, content] of files) {
      const r = await parser.parse(name, content);
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      expect(r.file.body.blocks.length).toBeGreaterThan(0);
      for (const b of r.file.body.blocks) {
        expect(b.type).toBe('provider');
        expect(b.labels[0]).toMatch(/^registry\.terraform\.io\/[^/]+\/[^/]+$/);
        expect(b.body.attributes.map((a) => a.name)).toEqual(expect.arrayContaining(['version', 'hashes']));
      }
    }
  });
});
