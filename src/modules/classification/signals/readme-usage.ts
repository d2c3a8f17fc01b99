import type { Signal } from '../types';
import { strong } from '../types';

/** README usage blocks (`source = "github.com/org/repo//<dir>?ref=…"`, `//<<Module Name>>`) name
 * the directory as a module, and it configures no provider. */
export const readmeUsage: Signal = {
  id: 'readme-usage',
  decide({ path, configured }, ctx) {
    if (configured.length > 0) return null;
    const readme = ctx.readmeEvidence(path);
    return readme === null ? null : strong('shared', readme);
  },
};
