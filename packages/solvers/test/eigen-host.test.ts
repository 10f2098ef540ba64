import { HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe } from 'vitest';
import { eigenSuite } from './eigen-suite';

describe('eigensolvers on HostVectorSpace (float64)', () => {
  eigenSuite(() => ({ name: 'host-f64', space: new HostVectorSpace(), operator: (a) => HostOperator.fromCsr(a) }));
});
