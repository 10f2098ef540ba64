/**
 * Exit 0 when a WebGPU adapter (and device) can be created here, 1 with the reason otherwise.
 * Run in its own process by vitest.config.ts, so Dawn never loads in vitest's main process.
 */
import { createGpuContext } from '../../packages/gpu/src/index';

try {
  const ctx = await createGpuContext();
  console.log(ctx.describeText().split('\n')[0]);
  ctx.dispose();
  process.exit(0);
} catch (e) {
  console.log((e as Error).message.split('\n')[0]);
  process.exit(1);
}
