/**
 * Authenticates a registry's `SHA256SUMS` the way Terraform does
 * (hashicorp/terraform internal/getproviders/package_authentication.go, `signatureAuthentication`):
 *
 * 1. The detached signature must verify with one of the signing keys the registry returned for the
 *    provider (a key that did not issue it is skipped; any other failure is terminal).
 * 2. If it also verifies with HashiCorp's key, the provider is *official*.
 * 3. Else, if the signing key carries a `trust_signature`, that signature (over the key's binary
 *    form) must verify with the HashiCorp partners key: *partner* (failure is terminal).
 * 4. Else *community*.
 *
 * Key validity is judged at the signature's creation time, so a key that expired after signing
 * still verifies old releases.
 */
import type * as openpgp from 'openpgp';
import { loadOpenpgp } from '../util/lazy';
import type { TrustLevel } from './types';

/** openpgp.js, loaded on first use (src/util/lazy.ts says why). */
const pgp = loadOpenpgp;

export interface RegistrySigningKey {
  keyId?: string;
  asciiArmor: string;
  trustSignature?: string;
}

export type SignatureResult = { ok: true; trust: TrustLevel; keyId: string } | { ok: false; reason: string };

async function readSignature(bytes: Uint8Array): Promise<openpgp.Signature> {
  const text = Buffer.from(bytes).toString('latin1');
  if (text.includes('-----BEGIN PGP SIGNATURE-----')) {
    return (await pgp()).readSignature({ armoredSignature: Buffer.from(bytes).toString('utf8') });
  }
  return (await pgp()).readSignature({ binarySignature: bytes });
}

function signatureCreated(sig: openpgp.Signature): Date | undefined {
  const created = sig.packets[0]?.created;
  return created instanceof Date ? created : undefined;
}

type Check = { ok: true; keyId: string } | { ok: false; unknownIssuer: boolean; reason: string };

async function checkDetached(data: Uint8Array, sig: openpgp.Signature, keys: openpgp.Key[]): Promise<Check> {
  const message = await (await pgp()).createMessage({ binary: data });
  const date = signatureCreated(sig);
  const result = await (
    await pgp()
  ).verify({
    message,
    signature: sig,
    verificationKeys: keys,
    ...(date === undefined ? {} : { date }),
  });
  let last: Check = { ok: false, unknownIssuer: true, reason: 'the signature file holds no signature' };
  for (const s of result.signatures) {
    try {
      await s.verified;
      return { ok: true, keyId: s.keyID.toHex().toUpperCase() };
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      last = { ok: false, unknownIssuer: /could not find signing key/i.test(msg), reason: msg };
    }
  }
  return last;
}

async function readKeys(armored: string, what: string): Promise<openpgp.Key[]> {
  try {
    return await (await pgp()).readKeys({ armoredKeys: armored });
  } catch (err) {
    throw new Error(`cannot read ${what}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
}

export interface TrustAnchors {
  /** Armored keys whose signature marks an official provider (HashiCorp's key by default). */
  official: string[];
  /** Armored keys that sign partner keys' `trust_signature` (HashiCorp's partners key by default). */
  partners: string[];
}

/** Verifies `document` (the `SHA256SUMS` bytes) against `signature` and the registry's keys. */
export async function authenticateSums(
  document: Uint8Array,
  signature: Uint8Array,
  keys: readonly RegistrySigningKey[],
  anchors: TrustAnchors,
): Promise<SignatureResult> {
  let sig: openpgp.Signature;
  try {
    sig = await readSignature(signature);
  } catch (err) {
    return { ok: false, reason: `the signature file is not an OpenPGP signature: ${(err as Error).message}` };
  }
  if (keys.length === 0) {
    return {
      ok: false,
      reason: 'the registry returned no signing keys, so the checksums cannot be authenticated',
    };
  }
  let signer: { key: RegistrySigningKey; keyId: string } | null = null;
  for (const key of keys) {
    let parsed: openpgp.Key[];
    try {
      parsed = await readKeys(key.asciiArmor, 'a signing key from the registry');
    } catch (err) {
      return { ok: false, reason: (err as Error).message };
    }
    const check = await checkDetached(document, sig, parsed);
    if (!check.ok && check.unknownIssuer) continue;
    if (!check.ok) return { ok: false, reason: `the SHA256SUMS signature does not verify: ${check.reason}` };
    signer = { key, keyId: check.keyId };
    break;
  }
  if (signer === null) {
    return {
      ok: false,
      reason:
        'the SHA256SUMS signature was not made by any of the signing keys the registry publishes (unknown issuer)',
    };
  }
  for (const armored of anchors.official) {
    const official = await readKeys(armored, 'an official key');
    const check = await checkDetached(document, sig, official);
    if (check.ok) return { ok: true, trust: 'official', keyId: signer.keyId };
  }
  if (signer.key.trustSignature !== undefined && signer.key.trustSignature.trim() !== '') {
    let trustSig: openpgp.Signature;
    let keyBytes: Uint8Array;
    try {
      trustSig = await (await pgp()).readSignature({ armoredSignature: signer.key.trustSignature });
      keyBytes = (await (await pgp()).unarmor(signer.key.asciiArmor)).data as Uint8Array;
    } catch (err) {
      return {
        ok: false,
        reason: `the signing key's trust signature cannot be read: ${(err as Error).message}`,
      };
    }
    const partnerKeys = (
      await Promise.all(anchors.partners.map((a) => readKeys(a, 'a partners key')))
    ).flat();
    const check = await checkDetached(keyBytes, trustSig, partnerKeys);
    if (!check.ok) {
      return {
        ok: false,
        reason: `the signing key's trust signature does not verify with the partners key: ${check.reason}`,
      };
    }
    return { ok: true, trust: 'partner', keyId: signer.keyId };
  }
  return { ok: true, trust: 'community', keyId: signer.keyId };
}
