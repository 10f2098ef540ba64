import { describe } from 'vitest';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';
import { eigenSuite } from './eigen-suite';

// The same suite on the float32 emulation of the GPU backend (f32 tolerances).
describe('eigensolvers on Float32HostSpace (float32 emulation)', () => {
  eigenSuite(() => ({ name: 'host-f32-emulated', space: new Float32HostSpace(), operator: float32CsrOperator }));
});
