/**
 * Where the CLI keeps its cache, from the values that may name it (first set wins):
 * `TFGUARD_CACHE_DIR`, else `$XDG_CACHE_HOME/tfguard`, else `$HOME/.cache/tfguard` (the XDG Base
 * Directory default); undefined when none is set. Blank values count as unset. Shared by
 * src/config.ts and the CLI launcher (src/cli/launch.ts), which runs before config.ts is loaded.
 */
export function cacheDirectoryFrom(
  own: string | undefined,
  xdgCacheHome: string | undefined,
  home: string | undefined,
): string | undefined {
  const dir = own?.trim();
  if (dir !== undefined && dir !== '') return dir;
  const xdg = xdgCacheHome?.trim();
  if (xdg !== undefined && xdg !== '') return `${xdg.replace(/\/+$/, '')}/tfguard`;
  const h = home?.trim();
  if (h !== undefined && h !== '') return `${h.replace(/\/+$/, '')}/.cache/tfguard`;
  return undefined;
}
