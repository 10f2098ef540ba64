/**
 * A minimal WebAssembly binary writer: LEB128, the type/function/memory/export/code sections
 * and an instruction emitter covering exactly the opcodes the CSR SpMV kernels use (i32
 * arithmetic, f64 and v128 loads/stores with static offsets, structured control flow).
 * Encoding follows the WebAssembly core specification 2.0, chapter 5 (binary format); SIMD
 * opcodes follow the fixed-width SIMD proposal (merged in 2.0), prefix 0xfd.
 * No toolchain is involved: the bytes are built here and checked by `WebAssembly.validate`.
 * @module
 */
import { InvalidParameterError } from '../../core/errors';

/** Value types of the binary format (spec §5.3.1). */
export const ValType = { i32: 0x7f, i64: 0x7e, f32: 0x7d, f64: 0x7c, v128: 0x7b } as const;
/** A value type byte. */
export type ValTypeByte = (typeof ValType)[keyof typeof ValType];

/**
 * Unsigned LEB128 of a non-negative integer below 2^53 (spec §5.2.2). O(log n).
 * @example
 * uleb128(624485); // [0xe5, 0x8e, 0x26]
 */
export function uleb128(n: number): number[] {
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidParameterError('uleb128 n', 'a non-negative safe integer', n);
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/**
 * Signed LEB128 of a safe integer (spec §5.2.2), as used by `i32.const`. O(log |n|).
 * @example
 * sleb128(-123456); // [0xc0, 0xbb, 0x78]
 */
export function sleb128(n: number): number[] {
  if (!Number.isSafeInteger(n)) throw new InvalidParameterError('sleb128 n', 'a safe integer', n);
  const out: number[] = [];
  for (;;) {
    const byte = ((n % 128) + 128) % 128; // low 7 bits, two's complement
    n = Math.floor(n / 128); // arithmetic shift right by 7
    const signBit = (byte & 0x40) !== 0;
    if ((n === 0 && !signBit) || (n === -1 && signBit)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/** A UTF-8 name prefixed by its byte length (spec §5.2.4). */
export function encodeName(s: string): number[] {
  const b = new TextEncoder().encode(s);
  return [...uleb128(b.length), ...b];
}

/** A section: id byte, payload size (u32 LEB128), payload (spec §5.5.2). */
export function encodeSection(id: number, payload: readonly number[]): number[] {
  return [id, ...uleb128(payload.length), ...payload];
}

/** A vector: element count then the concatenated elements (spec §5.1.3). */
function vec(items: readonly (readonly number[])[]): number[] {
  return [...uleb128(items.length), ...items.flat()];
}

/**
 * Instruction emitter for one function body. Memory instructions take a byte offset (folded
 * into the instruction's memarg) and an alignment exponent (a hint only).
 * @example
 * const c = new CodeBuilder().localGet(0).localGet(1).op(Op.i32Add);
 */
export class CodeBuilder {
  readonly bytes: number[] = [];
  /** Raw opcode bytes. */
  op(...b: number[]): this {
    this.bytes.push(...b);
    return this;
  }
  localGet(i: number): this {
    return this.op(0x20, ...uleb128(i));
  }
  localSet(i: number): this {
    return this.op(0x21, ...uleb128(i));
  }
  localTee(i: number): this {
    return this.op(0x22, ...uleb128(i));
  }
  i32Const(v: number): this {
    return this.op(0x41, ...sleb128(v | 0));
  }
  f64Const(v: number): this {
    const b = new Uint8Array(new Float64Array([v]).buffer); // little-endian IEEE 754
    return this.op(0x44, ...b);
  }
  /** `block` / `loop` / `if` with an empty block type. */
  block(): this {
    return this.op(0x02, 0x40);
  }
  loop(): this {
    return this.op(0x03, 0x40);
  }
  if(): this {
    return this.op(0x04, 0x40);
  }
  end(): this {
    return this.op(0x0b);
  }
  br(depth: number): this {
    return this.op(0x0c, ...uleb128(depth));
  }
  brIf(depth: number): this {
    return this.op(0x0d, ...uleb128(depth));
  }
  i32Load(offset = 0, align = 2): this {
    return this.op(0x28, ...uleb128(align), ...uleb128(offset));
  }
  f64Load(offset = 0, align = 3): this {
    return this.op(0x2b, ...uleb128(align), ...uleb128(offset));
  }
  f64Store(offset = 0, align = 3): this {
    return this.op(0x39, ...uleb128(align), ...uleb128(offset));
  }
  /** A SIMD instruction: prefix 0xfd, then the opcode as u32 LEB128, then immediates. */
  simd(opcode: number, ...imm: number[]): this {
    return this.op(0xfd, ...uleb128(opcode), ...imm);
  }
  v128Load(offset = 0, align = 3): this {
    return this.simd(SimdOp.v128Load, ...uleb128(align), ...uleb128(offset));
  }
  v128Load64Splat(offset = 0, align = 3): this {
    return this.simd(SimdOp.v128Load64Splat, ...uleb128(align), ...uleb128(offset));
  }
  /** Replace lane `lane` of the v128 on the stack with the f64 at the address below it. */
  v128Load64Lane(lane: number, offset = 0, align = 3): this {
    return this.simd(SimdOp.v128Load64Lane, ...uleb128(align), ...uleb128(offset), lane);
  }
  f64x2ExtractLane(lane: number): this {
    return this.simd(SimdOp.f64x2ExtractLane, lane);
  }
}

/** Plain opcodes used by the kernels (spec §5.4). */
export const Op = {
  i32Eqz: 0x45,
  i32LtU: 0x49,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Shl: 0x74,
  f64Add: 0xa0,
  f64Mul: 0xa2,
} as const;

/** SIMD opcodes (after the 0xfd prefix). */
export const SimdOp = {
  v128Load: 0x00,
  v128Load64Splat: 0x0a,
  v128Const: 0x0c,
  f64x2Splat: 0x14,
  f64x2ExtractLane: 0x21,
  v128Load64Lane: 0x57,
  f64x2Add: 0xf0,
  f64x2Mul: 0xf2,
} as const;

/** One function of a module: its signature, its extra locals (in order), its body. */
export interface FunctionSpec {
  name: string;
  params: readonly ValTypeByte[];
  results: readonly ValTypeByte[];
  locals: readonly ValTypeByte[];
  body: CodeBuilder;
}

/**
 * Assemble a module with one memory (exported as `memory`) and the given exported functions.
 * Sections in order: type (1), import (2, only for an imported memory `env.memory`), function
 * (3), memory (5, only when not imported), export (7), code (10). `shared` marks the memory as
 * shared (limits flag 3, a maximum required): one memory for the instances of several threads.
 * Functions may call each other by index (`call`, opcode 0x10) in the order given.
 * Cost: linear in the size of the bodies.
 * @example
 * const body = new CodeBuilder().localGet(0).localGet(1).op(Op.i32Add);
 * const bytes = buildModule([{ name: 'add', params: [ValType.i32, ValType.i32], results: [ValType.i32], locals: [], body }], { minPages: 0 });
 * new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.add; // (a, b) => a + b
 */
export function buildModule(
  funcs: readonly FunctionSpec[],
  memory: { minPages: number; maxPages?: number; shared?: boolean; imported?: boolean },
): Uint8Array<ArrayBuffer> {
  if (memory.shared && memory.maxPages === undefined) throw new InvalidParameterError('buildModule memory.maxPages', 'a maximum for a shared memory', 'undefined');
  const types = funcs.map((f) => [0x60, ...vec(f.params.map((t) => [t])), ...vec(f.results.map((t) => [t]))]);
  const limits =
    memory.maxPages === undefined
      ? [0x00, ...uleb128(memory.minPages)]
      : [memory.shared ? 0x03 : 0x01, ...uleb128(memory.minPages), ...uleb128(memory.maxPages)];
  // an imported memory ("env" "memory") lets several instances (worker threads) share one
  const memorySections = memory.imported
    ? encodeSection(2, vec([[...encodeName('env'), ...encodeName('memory'), 0x02, ...limits]]))
    : [];
  const exports = [
    [...encodeName('memory'), 0x02, 0x00],
    ...funcs.map((f, i) => [...encodeName(f.name), 0x00, ...uleb128(i)]),
  ];
  const codes = funcs.map((f) => {
    // locals are run-length encoded: (count, type) pairs
    const groups: number[][] = [];
    for (const t of f.locals) {
      const last = groups[groups.length - 1];
      if (last && last[1] === t) last[0]!++;
      else groups.push([1, t]);
    }
    const body = [...vec(groups.map(([n, t]) => [...uleb128(n!), t!])), ...f.body.bytes, 0x0b];
    return [...uleb128(body.length), ...body];
  });
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, // magic "\0asm"
    0x01, 0x00, 0x00, 0x00, // version 1
    ...encodeSection(1, vec(types)),
    ...memorySections,
    ...encodeSection(3, vec(funcs.map((_, i) => uleb128(i)))),
    ...(memory.imported ? [] : encodeSection(5, vec([limits]))),
    ...encodeSection(7, vec(exports)),
    ...encodeSection(10, vec(codes)),
  ]);
}
