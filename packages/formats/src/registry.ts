/**
 * Every storage format, in one list. A format not listed here is not tested by the
 * conformance loop and does not ship.
 * @module
 */
import { InvalidParameterError } from './core/errors';
import type { FormatDescriptor, SparseMatrix } from './core/types';
import { cooFormat } from './coo/index';
import { cscFormat } from './csc/index';
import { csrFormat } from './csr/index';
// -- ELL family (helper A) --
import { ellFormat } from './ell/index';
import { ellRFormat } from './ell-r/index';
import { hybridFormat } from './hybrid/index';
import { sellFormat } from './sell/index';
import { slicedEllFormat } from './sliced-ell/index';
import { slicedEllRFormat } from './sliced-ell-r/index';
// -- AXC / AXT (helper B) --
import { axcFormat } from './axc/index';
import { axtch1Format, axtchFormat, axtuh1Format, axtuhFormat } from './axt/index';
// -- diagonal and survey formats (helper C) --
import { cdmFormat } from './cdm/index';
import { diaFormat } from './dia/index';
import { hmFormat } from './hm/index';
import { acsrFormat } from './acsr/index';
import { csrViFormat } from './csr-vi/index';
import { bcsrFormat } from './bcsr/index';
import { cmrsFormat } from './cmrs/index';
import { csbFormat } from './csb/index';
import { mqtFormat, qcsrFormat } from './quadtree/index';
import { rgcsrFormat } from './rgcsr/index';
import { sbcsrFormat, scsrFormat } from './streamed/index';

/** Any format descriptor. */
// biome-ignore lint/suspicious/noExplicitAny: heterogeneous registry of descriptors
export type AnyFormat = FormatDescriptor<SparseMatrix & any, any>;

/** All formats, in the order of the memory tables. */
export const formats: readonly AnyFormat[] = [
  csrFormat,
  cooFormat,
  cscFormat,
  // -- ELL family (helper A) --
  ellFormat,
  ellRFormat,
  slicedEllFormat,
  slicedEllRFormat,
  sellFormat,
  hybridFormat,
  // -- AXC / AXT (helper B) --
  axcFormat,
  axtuh1Format,
  axtuhFormat,
  axtch1Format,
  axtchFormat,
  // -- diagonal and survey formats (helper C) --
  diaFormat,
  hmFormat,
  cdmFormat,
  bcsrFormat,
  csbFormat,
  rgcsrFormat,
  cmrsFormat,
  qcsrFormat,
  mqtFormat,
  scsrFormat,
  sbcsrFormat,
  acsrFormat,
  csrViFormat,
];

/** Look a format up by name; an unknown name is an InvalidParameterError ('format') listing the known names. */
export function getFormat(name: string): AnyFormat {
  const f = formats.find((d) => d.name === name);
  if (!f) throw new InvalidParameterError('format', `a registered format name (one of ${formats.map((d) => d.name).join(', ')})`, `'${name}'`);
  return f;
}
