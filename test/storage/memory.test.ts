import { MemoryStore } from '../support/memory-store';
import { objectStoreContract } from '../support/storage-contract';

// The test double of the registry and extraction caches keeps the promises of the real adapters.
objectStoreContract('MemoryStore (test/support)', {
  store: async () => new MemoryStore(),
  // No pages: listing many keys is the same code path.
  pagedStore: async () => new MemoryStore(),
  byteOrderAcrossDepths: true,
});
