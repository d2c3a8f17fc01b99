import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { readInput } from '../../src/archive';
import { compareUtf8 } from '../../src/archive/paths';
import { corpusFile, describeWithCorpus } from '../support/external';

// Counts from the corpus's SOURCES.md.
const EXPECTED: [string, number, number][] = [
  ['cloudposse_terraform-aws-components.tar.gz', 1801, 0],
  ['ministryofjustice_modernisation-platform.tar.gz', 1189, 0],
  ['ministryofjustice_cloud-platform-infrastructure.tar.gz', 136, 12],
  ['terraform-aws-modules_terraform-aws-eks.tar.gz', 87, 0],
  ['terraform-aws-modules_terraform-aws-vpc.tar.gz', 77, 0],
  ['hashicorp_learn-terraform-provision-eks-cluster.tar.gz', 4, 1],
];

describeWithCorpus('real-world corpus', () => {
  test.each(EXPECTED)('%s: %i .tf files, %i lock files', async (file, tfCount, lockCount) => {
    const full = corpusFile(file);
    const archive = await readInput(full);
    expect(archive.format).toBe('tar.gz');
    expect(archive.name).toBe(file);
    expect(archive.sha256).toBe(createHash('sha256').update(readFileSync(full)).digest('hex'));

    const files = archive.entries.filter((e) => e.type === 'file');
    const tf = files.filter((e) => e.path.endsWith('.tf'));
    const locks = files.filter((e) => path.posix.basename(e.path) === '.terraform.lock.hcl');
    expect(tf).toHaveLength(tfCount);
    expect(locks).toHaveLength(lockCount);

    // Every selected file is loaded, its hash matches, nothing else is kept in memory.
    for (const entry of [...tf, ...locks]) {
      const content = archive.files.get(entry.path);
      expect(content).toBeDefined();
      expect(
        createHash('sha256')
          .update(content as Buffer)
          .digest('hex'),
      ).toBe(entry.sha256);
      expect(content?.length).toBe(entry.size);
    }
    expect(archive.files.has('LICENSE')).toBe(false);
    const sorted = [...archive.entries].sort((a, b) => compareUtf8(a.path, b.path));
    expect(archive.entries.map((e) => e.path)).toEqual(sorted.map((e) => e.path));
    expect(archive.entries.every((e) => !e.path.startsWith('./') && !e.path.endsWith('/'))).toBe(true);
  });
});
