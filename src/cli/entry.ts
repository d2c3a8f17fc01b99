/** Process entry point (bin/tfguard.js loads the compiled copy; `tsx src/cli/entry.ts` runs it from source). */
import { main } from './main';

main();
