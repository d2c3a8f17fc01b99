/**
 * The API (against s3rver) with a hostile archive: `POST /scans?fix=true` answers with a patch
 * that the real `git apply` and GNU `patch -p1` accept on the archive as `tar` extracts it, giving
 * the fixed files and nothing else (no `.github/workflows/pwn.yml` from a directory named like a
 * patch header), with a `.git`-like directory left out and named; the Markdown answer escapes the
 * same names.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createScan } from '../../handlers/api';
import { buildTarGz } from '../support/archive';
import { describeWithExternal } from '../support/external';
import { type Harness, sampleEvent, startHarness } from '../support/lambda';
import { readTextTree } from '../support/terraform';

const run = promisify(execFile);

const ROOT_TF = [
  'terraform {',
  '  backend "local" {}',
  '  required_providers {',
  '    aws = { source = "hashicorp/aws", version = ">= 5.1" }',
  '  }',
  '}',
  '',
].join('\n');
const FIXED_TF = ROOT_TF.replace('">= 5.1"', '"~> 5.1"');

const DIRS = [
  'x\n+++ b/.github/workflows/pwn.yml\n@@ -0,0 +1 @@\n+pwn',
  'tab\tcr\rquote"esc\u001b[31m',
  '<img src=x onerror=alert(1)> @octocat',
  '::error file=a::pwned',
];
const LEFT_OUT = 'vendor/.GIT/main.tf';

let h: Harness;
let tarball: Buffer;
let tmp: string;
beforeAll(async () => {
  h = await startHarness();
  tarball = await buildTarGz(
    [...DIRS.map((d) => `${d}/main.tf`), LEFT_OUT].map((name) => ({ name, data: ROOT_TF })),
  );
  tmp = await mkdtemp(path.join(os.tmpdir(), 'tfguard-api-hostile-'));
});
afterAll(async () => {
  await h?.stop();
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
});

function postScans(query: Record<string, string>, accept: string): APIGatewayProxyEventV2 {
  const event = sampleEvent<APIGatewayProxyEventV2>('http-post-scans.json');
  return {
    ...event,
    headers: { ...event.headers, accept },
    queryStringParameters: query,
    body: tarball.toString('base64'),
    isBase64Encoded: true,
  };
}

async function call(
  event: APIGatewayProxyEventV2,
): Promise<APIGatewayProxyStructuredResultV2 & { body: string }> {
  return (await createScan(event, h.context('api'))) as APIGatewayProxyStructuredResultV2 & { body: string };
}

describeWithExternal(['patch'], 'POST /scans with a hostile archive', () => {
  test('fix=true: the patch goes through git apply and patch -p1 on the extracted archive', async () => {
    const result = await call(postScans({ fix: 'true' }, 'application/json'));
    expect(result.statusCode).toBe(200);
    const { patch } = JSON.parse(result.body) as { patch: string };
    expect(patch).toMatch(/^# tfguard: left out of this patch: vendor\/\.GIT\/main\.tf: git apply refuses/);
    // eslint-disable-next-line no-control-regex
    expect(patch.replace(/\t\n/g, '\n')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    const archive = path.join(tmp, 'hostile.tar.gz');
    const patchFile = path.join(tmp, 'fix.patch');
    await writeFile(archive, tarball);
    await writeFile(patchFile, patch);
    for (const tool of ['git', 'patch'] as const) {
      const dir = path.join(tmp, tool);
      await mkdir(dir);
      await run('tar', ['-xzf', archive, '-C', dir]);
      if (tool === 'git') await run('git', ['apply', patchFile], { cwd: dir });
      else {
        const r = spawnSync('patch', ['-p1', '--batch', '-i', patchFile], { cwd: dir, encoding: 'utf8' });
        expect([r.status, r.stderr]).toEqual([0, '']);
      }
      expect(await readTextTree(dir)).toEqual({
        ...Object.fromEntries(DIRS.map((d) => [`${d}/main.tf`, FIXED_TF])),
        [LEFT_OUT]: ROOT_TF,
      });
    }
  });

  test('Accept: text/markdown: names are escaped code, no raw control character', async () => {
    const result = await call(postScans({}, 'text/markdown'));
    expect(result.statusCode).toBe(200);
    const md = result.body;
    // eslint-disable-next-line no-control-regex
    expect(md).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    expect(md).toContain('`x\\x0a+++ b/.github/workflows/pwn.yml\\x0a@@ -0,0 +1 @@\\x0a+pwn/main.tf:4`');
    expect(md).toContain('`<img src=x onerror=alert(1)> @octocat/main.tf:4`');
    expect(md).toContain('root module "\\<img src=x onerror=alert(1)\\> @&#8203;octocat"');
  });
});
