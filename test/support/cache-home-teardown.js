/** Jest `globalTeardown`: removes the temporary cache home jest.config.js made for the run. */
const fs = require('node:fs');

module.exports = async () => {
  const home = process.env.TFGUARD_TEST_CACHE_HOME;
  if (home !== undefined && home.includes('tfguard-test-cache-'))
    fs.rmSync(home, { recursive: true, force: true });
};
