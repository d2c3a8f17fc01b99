/**
 * Terraform as the oracle of registry credentials: the same `TF_TOKEN_<host>` variable (a hostname
 * with a hyphen, written `__`) against the same fake registry that requires a bearer token. Where
 * terraform (1.11) gets the module, tfguard resolves it; where terraform is refused (a wrong
 * token), tfguard reports the module unresolved; and both send the token in the same form.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { registryTokens } from '../../src/config';
import type { Report } from '../../src/report/types';
import { lines } from '../support/rule-table';
import { describeWithTerraform } from '../support/external';
import { cliHostBlock, selfSignedCertificate, startRegistry } from '../support/registry-server';
import type { RegistryServer } from '../support/registry-server';
import { findingsOf, scanFiles } from '../support/scan';
import { runTerraform, writeTree } from '../support/terraform';

const HOST = 'my-registry.example.com';
const VAR = 'TF_TOKEN_my__registry_example_com';
const TOKEN = 'oracle-token.atlasv1.0123456789';
const tokenPaths = /^\/(v1\/|\.well-known\/)/;
const MAIN = lines('module "m" {', `  source  = "${HOST}/acme/net/google"`, '  version = "1.0.0"', '}');

describeWithTerraform('registry credentials (terraform as the oracle)', () => {
  /** HTTPS for terraform, which talks only to HTTPS registries; the same answers over HTTP for
   * tfguard (no certificate to trust). */
  let registry: RegistryServer;
  let plain: RegistryServer;
  let cert: Awaited<ReturnType<typeof selfSignedCertificate>>;
  let tmp: string;
  let cliConfig: string;

  beforeAll(async () => {
    cert = await selfSignedCertificate();
    const modules = [
      {
        namespace: 'acme',
        name: 'net',
        system: 'google',
        versions: [{ version: '1.0.0', files: { 'main.tf': 'terraform {}\n' } }],
      },
    ];
    // terraform 1.11 sends the token to the registry API only, not to the package download (even on
    // the same host), so only the API requires it here.
    registry = await startRegistry({ https: cert, requireToken: TOKEN, tokenPaths, modules });
    plain = await startRegistry({ requireToken: TOKEN, tokenPaths, modules });
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-creds-oracle-'));
    cliConfig = path.join(tmp, 'cli.tfrc');
    // terraform finds the registry for HOST through a host block (no DNS for example.com here).
    await fs.writeFile(cliConfig, cliHostBlock(HOST, registry.url, 'modules'));
  }, 60_000);

  afterAll(async () => {
    await registry?.close();
    await plain?.close();
    await cert?.cleanup();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  async function terraformGet(token: string): Promise<{ ok: boolean; auth: (string | null)[] }> {
    registry.authorizations.length = 0;
    registry.requests.length = 0;
    const dir = await fs.mkdtemp(path.join(tmp, 'tf-'));
    await writeTree(dir, { 'main.tf': MAIN });
    const r = await runTerraform(['get', '-no-color'], dir, {
      TF_CLI_CONFIG_FILE: cliConfig,
      SSL_CERT_FILE: cert.certFile,
      [VAR]: token,
    });
    // The authorization of every API request (package downloads left out).
    const auth = registry.authorizations.filter((_, i) => tokenPaths.test(registry.requests[i] ?? ''));
    return { ok: r.code === 0, auth };
  }

  async function tfguard(token: string): Promise<{ ok: boolean; auth: (string | null)[] }> {
    plain.authorizations.length = 0;
    plain.requests.length = 0;
    const saved = process.env[VAR];
    process.env[VAR] = token;
    let tokens: Record<string, string>;
    try {
      tokens = registryTokens();
    } finally {
      if (saved === undefined) delete process.env[VAR];
      else process.env[VAR] = saved;
    }
    const report: Report = await scanFiles(
      { 'main.tf': MAIN },
      {
        remoteModules: true,
        registryTokens: tokens,
        configText: { name: 'ops.hcl', text: `registry_hosts = { "${HOST}" = "${plain.url}" }\n` },
        remoteModuleSettings: { retries: 0, timeoutMs: 5000 },
      },
    );
    expect(JSON.stringify(report)).not.toContain(token);
    const auth = plain.authorizations.filter((_, i) => tokenPaths.test(plain.requests[i] ?? ''));
    return { ok: findingsOf(report, 'module-unresolved').length === 0, auth };
  }

  it.each([
    ['the right token', TOKEN, true],
    ['a wrong token', 'not-the-token', false],
  ])(
    '%s: terraform and tfguard agree',
    async (_label, token, expected) => {
      const tf = await terraformGet(token);
      const ours = await tfguard(token);
      expect(tf.ok).toBe(expected);
      expect(ours.ok).toBe(tf.ok);
      // Both put the token in the same header, in the same form, on the registry's API requests.
      expect(tf.auth.length).toBeGreaterThan(0);
      expect(new Set(tf.auth)).toEqual(new Set([`Bearer ${token}`]));
      expect(new Set(ours.auth)).toEqual(new Set([`Bearer ${token}`]));
    },
    60_000,
  );
});
