// The gpusparse CLI as one bundle for the GPU machine (pack.sh): `node .gpukit/app/cli-run.mjs ci …`.
import { main, reportError } from '../packages/cli/src/main';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.exitCode = reportError(e, process.argv.includes('--debug'));
  },
);
