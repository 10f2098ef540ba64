import { readMatrixMarket } from '@gpusparse/formats';
import { lanczosShiftInvert } from './src/index';
const a = (await readMatrixMarket('/work/shared/data/matrices/bcsstk13.mtx')).matrix;
const r = await lanczosShiftInvert(a, { k: 4, tol: 1e-11, innerRtol: 1e-13, checkMultiplicity: false });
console.log(r.reason, r.iterations, r.values.map((v) => v.toPrecision(15)), r.inner.unconverged, r.inner.worstRelativeResidual);
