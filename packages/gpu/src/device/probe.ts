/**
 * Subgroup layout probe: one dispatch that records, per invocation of a 256-wide workgroup, its
 * subgroup lane and size, to learn whether subgroups are contiguous ranges of
 * local_invocation_index (WGSL does not promise it; the vector kernels' subgroup path needs it).
 * @module
 */

/** Observed subgroup layout. */
export interface SubgroupProbe {
  /** Subgroup size seen in a 256-invocation compute workgroup (0 without subgroups). */
  readonly size: number;
  /** Every invocation had lane = local_invocation_index mod size, with one size throughout. */
  readonly contiguous: boolean;
}

/** Run the probe (one dispatch and one readback, a few ms). */
export async function probeSubgroups(device: GPUDevice): Promise<SubgroupProbe> {
  const code = `enable subgroups;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) size: u32) {
  out[2u * lid] = lane;
  out[2u * lid + 1u] = size;
}`;
  const buf = device.createBuffer({ size: 2048, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size: 2048, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const pipeline = device.createComputePipeline({
    layout: 'auto',
    compute: { module: device.createShaderModule({ code, label: 'subgroup-probe' }), entryPoint: 'main' },
    label: 'subgroup-probe',
  });
  const bg = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: buf } }] });
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bg);
  pass.dispatchWorkgroups(1);
  pass.end();
  enc.copyBufferToBuffer(buf, 0, read, 0, 2048);
  device.queue.submit([enc.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const v = new Uint32Array(read.getMappedRange().slice(0));
  read.unmap();
  buf.destroy();
  read.destroy();
  const size = v[1]!;
  let contiguous = size > 0;
  for (let i = 0; i < 256 && contiguous; i++) contiguous = v[2 * i + 1] === size && v[2 * i] === i % size;
  return { size, contiguous };
}

/**
 * Whether the adapter described by `adapterInfo` runs on a CPU (lavapipe, SwiftShader): its
 * "device" work and compiles share the host's cores, and its compiler (LLVM in llvmpipe) pays for
 * unrolled code at compile time, where a GPU's pays nothing that matters.
 */
export const softwareAdapter = (ctx: { readonly adapterInfo: Readonly<Record<string, string>> }): boolean =>
  /llvmpipe|lavapipe|swiftshader|software/i.test(Object.values(ctx.adapterInfo).join(' '));
