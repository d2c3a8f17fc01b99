/**
 * A provider registry on 127.0.0.1 for tests: real HTTP, real zips, `SHA256SUMS` signed with a real
 * OpenPGP key generated in the test setup. It speaks the provider registry protocol
 * (service discovery, versions, download) and serves the zips, sums and signatures it advertises.
 *
 *   const key = await generateTestKey('Test Registry');
 *   const reg = await startRegistry({ signingKey: key, releases: [{ namespace: 'acme', type: 'cloud',
 *     version: '1.0.0', platforms: ['linux_amd64', 'darwin_arm64'] }] });
 *   // map a hostname to it: registryHosts = { 'registry.example.com': reg.url }
 *
 * Misbehaviour is configured per release (tampered sums, a signature by another key, no keys, an
 * OpenTofu-style `packages` list) or per request path (status codes, hangs, garbage, resets).
 *
 * It also speaks the module registry protocol (`modules.v1`): per module version, provider metadata
 * as registry.terraform.io gives it (`root`, `submodules[]`) or none (OpenTofu's registry), and a
 * package served as a tar.gz behind `download` (204 + `X-Terraform-Get`, or 200 + `{"location"}`).
 * `files` serves any other bytes by path (archives of a git host stand-in, oversized downloads) and
 * `/redirect/N/<path>` redirects N times before reaching `<path>`.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as openpgp from 'openpgp';
import { hashZip } from '../../src/lockfile';
import { makeTarGz } from './archive';
import { writeZip } from './terraform';
import type { ZipEntry } from './terraform';

export interface TestKey {
  privateKey: openpgp.PrivateKey;
  publicArmored: string;
  /** 16 upper-case hex digits. */
  keyId: string;
}

/** A fresh Ed25519 signing key (fast to generate). */
export async function generateTestKey(name: string): Promise<TestKey> {
  const { privateKey, publicKey } = await openpgp.generateKey({
    type: 'ecc',
    curve: 'curve25519Legacy',
    userIDs: [{ name, email: `${name.toLowerCase().replace(/[^a-z0-9]+/g, '.')}@example.test` }],
    format: 'armored',
  });
  const priv = await openpgp.readPrivateKey({ armoredKey: privateKey });
  return { privateKey: priv, publicArmored: publicKey, keyId: priv.getKeyID().toHex().toUpperCase() };
}

/** Detached binary signature of `data` by `key`. */
export async function signDetached(data: Uint8Array, key: TestKey, armored = false): Promise<Buffer> {
  const message = await openpgp.createMessage({ binary: data });
  if (armored) {
    const sig = await openpgp.sign({
      message,
      signingKeys: key.privateKey,
      detached: true,
      format: 'armored',
    });
    return Buffer.from(sig, 'utf8');
  }
  const sig = await openpgp.sign({ message, signingKeys: key.privateKey, detached: true, format: 'binary' });
  return Buffer.from(sig);
}

/** The trust signature a partners key makes over a provider key (detached, over the key's binary form). */
export async function trustSignature(providerKeyArmored: string, partners: TestKey): Promise<string> {
  const binary = (await openpgp.unarmor(providerKeyArmored)).data as Uint8Array;
  const message = await openpgp.createMessage({ binary });
  return openpgp.sign({ message, signingKeys: partners.privateKey, detached: true, format: 'armored' });
}

export interface FakeRelease {
  namespace: string;
  type: string;
  version: string;
  platforms: string[];
  /** Package contents per platform (default: one executable naming type, version and platform). */
  files?: (platform: string) => ZipEntry[];
  /** Serve a SHA256SUMS that differs from the one that was signed. */
  tamperSums?: boolean;
  /** Sign the sums with this key instead of the registry's (the published key stays the registry's). */
  signWith?: TestKey;
  /** Which keys the download response lists: the signer (default), none, or these. */
  keys?: 'signer' | 'none' | TestKey[];
  /** `trust_signature` attached to the published key. */
  trustSignature?: string;
  /** Add OpenTofu-style `packages` hashes to the download response. */
  packages?: boolean;
  /** Armored (text) signature instead of binary. */
  armoredSignature?: boolean;
  /** The download response's `shasum` lies (differs from the signed sums). */
  lyingShasum?: boolean;
  /** Replaces the `shasums_url` of the download response. */
  shasumsUrl?: string;
  /** More signed `SHA256SUMS` lines, as `[file name, content]` (HashiCorp's list a manifest too);
   * the files are served beside the zips. */
  extraFiles?: [string, string][];
}

export interface Fault {
  /** Request paths it applies to. */
  path: RegExp;
  kind: 'status' | 'hang' | 'garbage' | 'reset';
  status?: number;
  /** How many matching requests fail before it stops (default: all). */
  times?: number;
}

/** A provider requirement in module metadata, as the registry lists it (fields may be empty). */
export interface FakeProviderDep {
  name: string;
  namespace?: string;
  source?: string;
  version?: string;
}

export interface FakeModuleDep {
  name: string;
  source: string;
  version?: string;
}

export interface FakeModuleVersion {
  version: string;
  /** Provider metadata of the package root as registry.terraform.io gives it; absent: none (the
   * OpenTofu registry), and resolution must download the package. */
  root?: { providers: FakeProviderDep[]; dependencies?: FakeModuleDep[] };
  submodules?: { path: string; providers: FakeProviderDep[]; dependencies?: FakeModuleDep[] }[];
  /** The package's files (served as a tar.gz at `/packages/NS/NAME/SYSTEM/VERSION.tar.gz`). */
  files?: Record<string, string | Buffer>;
  /** How the download call answers: `header` (204 + X-Terraform-Get, default), `json` (200 +
   * `{"location"}`), or this location as given (absolute, relative or a git address). */
  download?: 'header' | 'json' | { location: string; status?: 200 | 204 };
}

export interface FakeModule {
  namespace: string;
  name: string;
  system: string;
  versions: FakeModuleVersion[];
}

export interface RegistryServerOptions {
  signingKey?: TestKey;
  releases?: FakeRelease[];
  /** Prefix of the providers API (default `/v1/providers/`); exercises discovery. */
  providersPath?: string;
  /** Serve HTTPS with this certificate (PEM) instead of HTTP: terraform talks only to HTTPS
   * registries (see `selfSignedCertificate`). */
  https?: { key: string; cert: string };
  modules?: FakeModule[];
  /** Prefix of the modules API (default `/v1/modules/`); null: the registry offers no modules. */
  modulesPath?: string | null;
  /** Any other bytes, by request path. */
  files?: Record<string, Buffer>;
  /** Request path → `Location` of a 302 answer (e.g. to another host). */
  redirects?: Record<string, string>;
  /** Every request must carry `Authorization: Bearer <requireToken>`, else 401 (as HCP Terraform
   * and private registries answer). */
  requireToken?: string;
  /** The paths `requireToken` applies to (default: every path). */
  tokenPaths?: RegExp;
}

interface Built {
  release: FakeRelease;
  zips: Map<string, Buffer>;
  signedSums: Buffer;
  servedSums: Buffer;
  signature: Buffer;
  packages: Record<string, { hashes: string[] }>;
}

export interface RegistryServer {
  /** Base URL, e.g. `http://127.0.0.1:41234` (map a hostname to it in `registryHosts`). */
  url: string;
  /** Every request path served, in order. */
  requests: string[];
  /** The `Authorization` header of every request (null when absent), in the order of `requests`. */
  authorizations: (string | null)[];
  faults: Fault[];
  /** `zh:` hashes of a release per platform (`OS_ARCH` → `zh:...`). */
  zh(namespace: string, type: string, version: string): Record<string, string>;
  /** `h1:` (unpacked-content) hashes of a release per platform. */
  h1(namespace: string, type: string, version: string): Record<string, string>;
  close(): Promise<void>;
}

function defaultFiles(r: FakeRelease, platform: string): ZipEntry[] {
  return [
    {
      name: `terraform-provider-${r.type}_v${r.version}`,
      data: `#!/bin/sh\n# ${r.namespace}/${r.type} ${r.version} ${platform}\nexit 1\n`,
      mode: 0o755,
    },
  ];
}

async function build(r: FakeRelease, registryKey: TestKey): Promise<Built> {
  const zips = new Map<string, Buffer>();
  const packages: Record<string, { hashes: string[] }> = {};
  const lines: string[] = [];
  for (const platform of r.platforms) {
    const name = `terraform-provider-${r.type}_${r.version}_${platform}.zip`;
    const zip = writeZip((r.files ?? ((p: string) => defaultFiles(r, p)))(platform));
    zips.set(name, zip);
    const hex = createHash('sha256').update(zip).digest('hex');
    lines.push(`${hex}  ${name}`);
    const z = await hashZip(zip);
    packages[platform] = { hashes: [z.h1, z.zh] };
  }
  for (const [name, content] of r.extraFiles ?? []) {
    zips.set(name, Buffer.from(content, 'utf8'));
    lines.push(`${createHash('sha256').update(content).digest('hex')}  ${name}`);
  }
  const signedSums = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
  const servedSums = r.tamperSums
    ? Buffer.from(
        signedSums.toString('utf8').replace(/^[0-9a-f]/, (c) => (c === '0' ? '1' : '0')),
        'utf8',
      )
    : signedSums;
  const signature = await signDetached(signedSums, r.signWith ?? registryKey, r.armoredSignature === true);
  return { release: r, zips, signedSums, servedSums, signature, packages };
}

/** Starts the registry; `close()` stops it (and drops hanging connections). */
export async function startRegistry(options: RegistryServerOptions): Promise<RegistryServer> {
  const providersPath = options.providersPath ?? '/v1/providers/';
  const modulesPath = options.modulesPath === undefined ? '/v1/modules/' : options.modulesPath;
  const releases = options.releases ?? [];
  if (releases.length > 0 && options.signingKey === undefined) throw new Error('releases need a signingKey');
  const built = await Promise.all(releases.map((r) => build(r, options.signingKey as TestKey)));
  const packages = new Map<string, Buffer>();
  for (const m of options.modules ?? []) {
    for (const v of m.versions) {
      if (v.files !== undefined) {
        packages.set(
          `/packages/${m.namespace}/${m.name}/${m.system}/${v.version}.tar.gz`,
          await makeTarGz(v.files),
        );
      }
    }
  }
  const files = new Map(Object.entries(options.files ?? {}));
  const find = (ns: string, type: string, version?: string): Built[] =>
    built.filter(
      (b) =>
        b.release.namespace === ns &&
        b.release.type === type &&
        (version === undefined || b.release.version === version),
    );
  const requests: string[] = [];
  const authorizations: (string | null)[] = [];
  const faults: Fault[] = [];
  const sockets = new Set<Socket>();

  const json = (res: ServerResponse, body: unknown, status = 200): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const bytes = (res: ServerResponse, body: Buffer, type = 'application/octet-stream'): void => {
    res.writeHead(200, { 'content-type': type, 'content-length': body.length });
    res.end(body);
  };
  const notFound = (res: ServerResponse): void => json(res, { errors: ['Not Found'] }, 404);

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(path);
    authorizations.push(req.headers.authorization ?? null);
    if (
      options.requireToken !== undefined &&
      (options.tokenPaths?.test(path) ?? true) &&
      req.headers.authorization !== `Bearer ${options.requireToken}`
    ) {
      return json(res, { errors: ['unauthorized'] }, 401);
    }
    const fault = faults.find((f) => f.path.test(path) && (f.times === undefined || f.times > 0));
    if (fault !== undefined) {
      if (fault.times !== undefined) fault.times--;
      if (fault.kind === 'hang') return; // never answers; close() destroys the socket
      if (fault.kind === 'reset') {
        req.socket.destroy();
        return;
      }
      if (fault.kind === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('<html>this is not the JSON you are looking for');
        return;
      }
      json(res, { errors: ['injected fault'] }, fault.status ?? 500);
      return;
    }
    if (path === '/.well-known/terraform.json') {
      json(res, {
        'providers.v1': providersPath,
        ...(modulesPath !== null ? { 'modules.v1': modulesPath } : {}),
      });
      return;
    }
    const redirect = /^\/redirect\/(\d+)(\/.*)$/.exec(path);
    if (redirect !== null) {
      const n = Number(redirect[1]);
      const target = n <= 1 ? (redirect[2] as string) : `/redirect/${n - 1}${redirect[2] as string}`;
      res.writeHead(302, { location: target, 'content-length': 0 });
      res.end();
      return;
    }
    const to = options.redirects?.[path];
    if (to !== undefined) {
      res.writeHead(302, { location: to, 'content-length': 0 });
      res.end();
      return;
    }
    const served = files.get(path) ?? packages.get(path);
    if (served !== undefined) return bytes(res, served, 'application/gzip');
    if (modulesPath !== null && path.startsWith(modulesPath)) {
      const rest = path.slice(modulesPath.length).split('/');
      const mod = (options.modules ?? []).find(
        (m) => m.namespace === rest[0] && m.name === rest[1] && m.system === rest[2],
      );
      if (mod === undefined) return notFound(res);
      if (rest.length === 4 && rest[3] === 'versions') {
        json(res, {
          modules: [
            {
              source: `${mod.namespace}/${mod.name}/${mod.system}`,
              versions: mod.versions.map((v) => ({
                version: v.version,
                ...(v.root === undefined
                  ? {}
                  : {
                      root: {
                        providers: v.root.providers.map(providerDep),
                        dependencies: (v.root.dependencies ?? []).map(moduleDep),
                      },
                      submodules: (v.submodules ?? []).map((sm) => ({
                        path: sm.path,
                        providers: sm.providers.map(providerDep),
                        dependencies: (sm.dependencies ?? []).map(moduleDep),
                      })),
                    }),
              })),
            },
          ],
        });
        return;
      }
      if (rest.length === 5 && rest[4] === 'download') {
        const v = mod.versions.find((x) => x.version === rest[3]);
        if (v === undefined) return notFound(res);
        const own = `/packages/${mod.namespace}/${mod.name}/${mod.system}/${v.version}.tar.gz`;
        const d = v.download ?? 'header';
        const location = typeof d === 'object' ? d.location : own;
        const status = typeof d === 'object' ? (d.status ?? 204) : d === 'json' ? 200 : 204;
        if (status === 204) {
          res.writeHead(204, { 'x-terraform-get': location });
          res.end();
        } else {
          json(res, { location });
        }
        return;
      }
      return notFound(res);
    }
    if (path.startsWith(providersPath)) {
      const rest = path.slice(providersPath.length).split('/');
      if (rest.length === 3 && rest[2] === 'versions') {
        const list = find(rest[0] as string, rest[1] as string);
        if (list.length === 0) return notFound(res);
        json(res, {
          versions: list.map((b) => ({
            version: b.release.version,
            protocols: ['5.0'],
            platforms: b.release.platforms.map((p) => {
              const [os, arch] = p.split('_');
              return { os, arch };
            }),
          })),
        });
        return;
      }
      if (rest.length === 6 && rest[3] === 'download') {
        const [ns, type, version, , os, arch] = rest as [string, string, string, string, string, string];
        const b = find(ns, type, version)[0];
        const platform = `${os}_${arch}`;
        if (b === undefined || !b.release.platforms.includes(platform)) return notFound(res);
        const r = b.release;
        const filename = `terraform-provider-${type}_${version}_${platform}.zip`;
        const zip = b.zips.get(filename) as Buffer;
        const keys =
          r.keys === 'none'
            ? []
            : r.keys === undefined || r.keys === 'signer'
              ? [options.signingKey as TestKey]
              : r.keys;
        const shasum = createHash('sha256').update(zip).digest('hex');
        json(res, {
          protocols: ['5.0'],
          os,
          arch,
          filename,
          download_url: `/files/${ns}/${type}/${version}/${filename}`,
          // relative to this response's URL, as the protocol allows
          shasums_url:
            r.shasumsUrl ??
            `${'../'.repeat(path.split('/').filter((x) => x !== '').length - 1)}files/${ns}/${type}/${version}/SHA256SUMS`,
          shasums_signature_url: `/files/${ns}/${type}/${version}/SHA256SUMS.sig`,
          shasum: r.lyingShasum ? shasum.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) : shasum,
          signing_keys: {
            gpg_public_keys: keys.map((k) => ({
              key_id: k.keyId,
              ascii_armor: k.publicArmored,
              trust_signature: r.trustSignature ?? '',
              source: 'Test',
              source_url: null,
            })),
          },
          ...(r.packages ? { packages: b.packages } : {}),
        });
        return;
      }
      return notFound(res);
    }
    const file = /^\/files\/([^/]+)\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(path);
    if (file !== null) {
      const b = find(file[1] as string, file[2] as string, file[3] as string)[0];
      if (b === undefined) return notFound(res);
      const name = file[4] as string;
      if (name === 'SHA256SUMS') return bytes(res, b.servedSums, 'text/plain');
      if (name === 'SHA256SUMS.sig') return bytes(res, b.signature);
      const zip = b.zips.get(name);
      return zip === undefined ? notFound(res) : bytes(res, zip, 'application/zip');
    }
    notFound(res);
  };

  const server: Server =
    options.https === undefined ? createServer(handle) : createHttpsServer(options.https, handle);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const byRelease = (ns: string, type: string, version: string): Built => {
    const b = find(ns, type, version)[0];
    if (b === undefined) throw new Error(`no release ${ns}/${type} ${version}`);
    return b;
  };
  return {
    url: `${options.https === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    requests,
    authorizations,
    faults,
    zh: (ns, type, version) =>
      Object.fromEntries(
        Object.entries(byRelease(ns, type, version).packages).map(([p, v]) => [p, v.hashes[1] as string]),
      ),
    h1: (ns, type, version) =>
      Object.fromEntries(
        Object.entries(byRelease(ns, type, version).packages).map(([p, v]) => [p, v.hashes[0] as string]),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function providerDep(p: FakeProviderDep): Record<string, string> {
  return { name: p.name, namespace: p.namespace ?? '', source: p.source ?? '', version: p.version ?? '' };
}

function moduleDep(d: FakeModuleDep): Record<string, string> {
  return { name: d.name, source: d.source, version: d.version ?? '' };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
/**
 * A terraform CLI configuration `host` block that sends `host`'s service discovery to this
 * registry for one service (`"modules.v1"` → `<url>/v1/modules/`): terraform then finds a registry
 * on 127.0.0.1 under a hostname with no DNS.
 */
export function cliHostBlock(host: string, url: string, service: 'modules' | 'providers'): string {
  return `host "${host}" {\n  services = {\n    "${service}.v1" = "${url}/v1/${service}/"\n  }\n}\n`;
}

export async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/**
 * A self-signed certificate for 127.0.0.1 (made with the openssl CLI), and the PEM file to trust it:
 * Go programs such as terraform read extra roots from `SSL_CERT_FILE`.
 */
export async function selfSignedCertificate(): Promise<{
  key: string;
  cert: string;
  certFile: string;
  cleanup: () => Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'tfguard-cert-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '2',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ]);
  return {
    key: await readFile(keyFile, 'utf8'),
    cert: await readFile(certFile, 'utf8'),
    certFile,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
