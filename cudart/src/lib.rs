//! fencehound's `libcudart.so.13`: a CUDA runtime whose kernel launches run on the
//! virtual GPU under the write-buffer model and seed its runner chooses.
//!
//! A program built with `nvcc -cudart shared` (what `fencehound nvcc` does) needs only
//! `libcudart.so.13`; `fencehound exec` puts this library in its place through the dynamic
//! loader (`LD_LIBRARY_PATH`). nvcc's host stubs then register the program's fat binaries,
//! kernels and `__device__` variables with us before `main`; we take the PTX out of each
//! fat binary ([`fatbin`] documents the layout nvcc 13 emits, compression included), load
//! it into one [`fencehound_vgpu::Device`], and run every launch there. The environment
//! and the side channel are described in `fencehound-cudart-protocol`.
//!
//! | area | implemented |
//! |---|---|
//! | registration | `__cudaRegisterFatBinary`/`End`, `__cudaUnregisterFatBinary`, `__cudaRegisterFunction`, `__cudaRegisterVar`, `__cudaPushCallConfiguration`/`Pop`, `__cudaGetKernel`, `__cudaLaunchKernel` |
//! | launches | `cudaLaunchKernel`, `cudaLaunchCooperativeKernel`, `cudaLaunchKernelExC` (cooperative/priority attributes), `cudaFuncGetAttributes`, `cudaFuncSetAttribute`, occupancy |
//! | memory | `cudaMalloc`/`Free` (+`Async`, `Pitch`, `3D`), `cudaMemcpy3D`/`Async` and `cudaMemset3D`/`Async` on pitched memory, memory pools (default and created pools, attributes, `cudaMallocFromPoolAsync`), `cudaMallocManaged` and `__managed__` variables (one address for host and device, coherent around every device operation; `cudaMemPrefetchAsync`, `cudaMemAdvise`, `cudaStreamAttachMemAsync` as hints), `cudaMallocHost`, `cudaHostAlloc` (with `cudaHostAllocMapped`: zero-copy memory made as a managed allocation, `cudaHostGetDevicePointer` giving the host's pointer), `cudaMemcpy`/`Async`/`2D`, `cudaMemset`/`2D`, `cudaMemcpyToSymbol`/`FromSymbol`, `cudaGetSymbolAddress`/`Size`, `cudaMemGetInfo`, `cudaPointerGetAttributes` |
//! | arrays, textures | `cudaMallocArray`/`cudaMalloc3DArray`, `cudaFreeArray`, `cudaMemcpy2DToArray`/`FromArray`, `cudaMemcpyToArray`/`FromArray`, `cudaGetChannelDesc`, `cudaArrayGetInfo`; `cudaCreateTextureObject` over an array, linear or pitched memory (point or linear filtering, every address mode, element or normalized-float reads, normalized coordinates) and `cudaDestroyTextureObject`, which kernels' `tex` fetches read; `cudaCreateSurfaceObject`/`Destroy` over arrays for `suld.b`/`sust.b` (`fencehound_vgpu::texture`) ([`api::texture_api`]) |
//! | streams, events | all synchronous: create/destroy/synchronize/query/wait, host functions and callbacks run at once; events time the vgpu's work in wall-clock milliseconds |
//! | graphs | stream capture (launches, 1-D copies, sets, host functions, events across streams), `cudaGraphAdd{Kernel,Memcpy1D,Memset,Host,Empty}Node`, dependencies, instantiate, launch (nodes one after another in dependency order), kernel-node parameter updates ([`graph`]) |
//! | errors, devices | `cudaGetLastError`, `cudaPeekAtLastError`, `cudaGetErrorString`/`Name`; one device, `cudaGetDeviceProperties` and `cudaDeviceGetAttribute` describe the vgpu |
//!
//! Every other export of the real `libcudart.so.13` (`symbols.txt`) exists too, generated
//! by `build.rs`: it prints its name, records it in the side channel and returns
//! `cudaErrorNotSupported` — never a crash, never a silent success. Not supported:
//! `cudaHostRegister` with `cudaHostRegisterMapped` and kernels dereferencing
//! `cudaMallocHost` memory (host memory the vgpu did not allocate); mipmapped, layered and
//! cubemap arrays, 3-D copies to arrays, texture and surface references, formatted
//! surface accesses and surface reductions, graph
//! nodes other than those above (3-D copies, memory, event, child-graph, conditional
//! nodes), IPC, `-rdc` device linking (its fat binaries carry no PTX).
//!
//! The library carries the `libcudart.so.13` SONAME and version node (`build.rs`).

pub mod api;
pub mod errors;
pub mod fatbin;
pub mod graph;
pub mod lz4;
pub mod props;
pub mod runtime;

/// Entry points of the real library this runtime does not implement.
mod stubs {
    include!(concat!(env!("OUT_DIR"), "/stubs.rs"));
}
