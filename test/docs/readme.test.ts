import { promises as fs } from 'node:fs';
import {
  applySections,
  corpusSections,
  README,
  repositorySections,
  RULES_INDEX,
  rulesIndexSections,
  SERVICE_DOC,
  serviceSections,
} from '../../scripts/readme-sections';
import { CORPUS_DIR_VAR, describeWithCorpus, REQUIRE_EXTERNAL_VAR } from '../support/external';

describe('README', () => {
  it('shows the current rule table and the current output of the example scan', async () => {
    const text = await fs.readFile(README, 'utf8');
    // On failure: npx tsx scripts/readme-sections.ts --write
    expect(applySections(text, await repositorySections())).toBe(text);
  });

  it('docs/rules/README.md lists every registered rule, generated from the registry', async () => {
    const text = await fs.readFile(RULES_INDEX, 'utf8');
    // On failure: npx tsx scripts/readme-sections.ts --write
    expect(applySections(text, rulesIndexSections())).toBe(text);
  });

  it('docs/service.md lists every variable of the service, generated from the settings tables', async () => {
    const text = await fs.readFile(SERVICE_DOC, 'utf8');
    // On failure: npx tsx scripts/readme-sections.ts --write
    expect(applySections(text, serviceSections())).toBe(text);
  });

  it('gives the two fresh-machine commands that CI and people run', async () => {
    const text = await fs.readFile(README, 'utf8');
    expect(text).toContain('npx tfguard scan examples/platform-demo.tar.gz');
    expect(text).toMatch(/^npm test\b/m);
    const ci = await fs.readFile(`${__dirname}/../../.ci/run`, 'utf8');
    expect(ci).toMatch(/^npm test$/m);
  });

  it('says what the tests skip without the corpus or terraform, and CI makes that a failure', async () => {
    const text = await fs.readFile(README, 'utf8');
    expect(text).toContain(CORPUS_DIR_VAR);
    expect(text).toContain(`${REQUIRE_EXTERNAL_VAR}=1`);
    const ci = await fs.readFile(`${__dirname}/../../.ci/run`, 'utf8');
    expect(ci).toMatch(new RegExp(`^export ${REQUIRE_EXTERNAL_VAR}=1$`, 'm'));
  });
});

describeWithCorpus('README (corpus sample)', () => {
  it('shows the current output of the corpus scan', async () => {
    const text = await fs.readFile(README, 'utf8');
    // On failure: npx tsx scripts/readme-sections.ts --write
    expect(applySections(text, await corpusSections())).toBe(text);
  });
});
