import type { Signal } from '../types';
import { strong } from '../types';

/** A directory whose files all fail to parse and contain `{% … %}` or `{{ … }}` holds templates. */
export const templateFiles: Signal = {
  id: 'template-files',
  decide({ module }, ctx) {
    const files = module.files;
    if (files.length === 0 || !files.every((f) => ctx.templateFiles.has(f))) return null;
    return strong('fragment', 'its files are templates ({% … %} / {{ … }}), not Terraform');
  },
};
