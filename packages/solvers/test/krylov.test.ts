import { HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { f32Operator, Float32HostSpace } from './krylov-f32-space';
import { krylovSuite } from './krylov-suite';

krylovSuite({ name: 'host-f64', makeSpace: () => new HostVectorSpace(), makeOp: (a) => HostOperator.fromCsr(a) });
krylovSuite({ name: 'host-f32-emulated', makeSpace: () => new Float32HostSpace(), makeOp: (a) => f32Operator(a) });
