//! What the virtual GPU says about itself: `struct cudaDeviceProp` (field order and types
//! of CUDA 13's `driver_types.h`; 1,008 bytes, checked against the header with gcc's
//! `sizeof`), `cudaDeviceGetAttribute` and `struct cudaFuncAttributes`.
//!
//! The limits are the vgpu's where it has them (1,024 threads per block, 227 KiB of shared
//! memory, 80 multiprocessors, grid y/z ≤ 65,535) and an sm_80's otherwise.

use crate::runtime::{
    BLOCKS_PER_SM, CC_MAJOR, CC_MINOR, SHARED_PER_BLOCK, THREADS_PER_SM, TOTAL_MEM,
};
use fencehound_vgpu::device::MAX_SHARED;
use fencehound_vgpu::exec::NUM_SMS;
use std::os::raw::{c_char, c_int, c_uint};

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DeviceProp {
    pub name: [c_char; 256],
    pub uuid: [u8; 16],
    pub luid: [c_char; 8],
    pub luid_device_node_mask: c_uint,
    pub total_global_mem: usize,
    pub shared_mem_per_block: usize,
    pub regs_per_block: c_int,
    pub warp_size: c_int,
    pub mem_pitch: usize,
    pub max_threads_per_block: c_int,
    pub max_threads_dim: [c_int; 3],
    pub max_grid_size: [c_int; 3],
    pub total_const_mem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub texture_alignment: usize,
    pub texture_pitch_alignment: usize,
    pub multi_processor_count: c_int,
    pub integrated: c_int,
    pub can_map_host_memory: c_int,
    pub max_texture_1d: c_int,
    pub max_texture_1d_mipmap: c_int,
    pub max_texture_2d: [c_int; 2],
    pub max_texture_2d_mipmap: [c_int; 2],
    pub max_texture_2d_linear: [c_int; 3],
    pub max_texture_2d_gather: [c_int; 2],
    pub max_texture_3d: [c_int; 3],
    pub max_texture_3d_alt: [c_int; 3],
    pub max_texture_cubemap: c_int,
    pub max_texture_1d_layered: [c_int; 2],
    pub max_texture_2d_layered: [c_int; 3],
    pub max_texture_cubemap_layered: [c_int; 2],
    pub max_surface_1d: c_int,
    pub max_surface_2d: [c_int; 2],
    pub max_surface_3d: [c_int; 3],
    pub max_surface_1d_layered: [c_int; 2],
    pub max_surface_2d_layered: [c_int; 3],
    pub max_surface_cubemap: c_int,
    pub max_surface_cubemap_layered: [c_int; 2],
    pub surface_alignment: usize,
    pub concurrent_kernels: c_int,
    pub ecc_enabled: c_int,
    pub pci_bus_id: c_int,
    pub pci_device_id: c_int,
    pub pci_domain_id: c_int,
    pub tcc_driver: c_int,
    pub async_engine_count: c_int,
    pub unified_addressing: c_int,
    pub memory_bus_width: c_int,
    pub l2_cache_size: c_int,
    pub persisting_l2_cache_max_size: c_int,
    pub max_threads_per_multi_processor: c_int,
    pub stream_priorities_supported: c_int,
    pub global_l1_cache_supported: c_int,
    pub local_l1_cache_supported: c_int,
    pub shared_mem_per_multiprocessor: usize,
    pub regs_per_multiprocessor: c_int,
    pub managed_memory: c_int,
    pub is_multi_gpu_board: c_int,
    pub multi_gpu_board_group_id: c_int,
    pub host_native_atomic_supported: c_int,
    pub pageable_memory_access: c_int,
    pub concurrent_managed_access: c_int,
    pub compute_preemption_supported: c_int,
    pub can_use_host_pointer_for_registered_mem: c_int,
    pub cooperative_launch: c_int,
    pub shared_mem_per_block_optin: usize,
    pub pageable_memory_access_uses_host_page_tables: c_int,
    pub direct_managed_mem_access_from_host: c_int,
    pub max_blocks_per_multi_processor: c_int,
    pub access_policy_max_window_size: c_int,
    pub reserved_shared_mem_per_block: usize,
    pub host_register_supported: c_int,
    pub sparse_cuda_array_supported: c_int,
    pub host_register_read_only_supported: c_int,
    pub timeline_semaphore_interop_supported: c_int,
    pub memory_pools_supported: c_int,
    pub gpu_direct_rdma_supported: c_int,
    pub gpu_direct_rdma_flush_writes_options: c_uint,
    pub gpu_direct_rdma_writes_ordering: c_int,
    pub memory_pool_supported_handle_types: c_uint,
    pub deferred_mapping_cuda_array_supported: c_int,
    pub ipc_event_supported: c_int,
    pub cluster_launch: c_int,
    pub unified_function_pointers: c_int,
    pub device_numa_config: c_int,
    pub device_numa_id: c_int,
    pub mps_enabled: c_int,
    pub host_numa_id: c_int,
    pub gpu_pci_device_id: c_uint,
    pub gpu_pci_subsystem_id: c_uint,
    pub host_numa_multinode_ipc_supported: c_int,
    pub reserved: [c_int; 56],
}

pub const DEVICE_NAME: &str = "fencehound virtual GPU (vgpu)";
/// Registers per block / per multiprocessor reported (sm_80's).
const REGS: c_int = 65536;

pub fn device_prop() -> DeviceProp {
    // SAFETY: DeviceProp is plain old data (integers and arrays of them); all-zero is a
    // valid value of every field.
    let mut p: DeviceProp = unsafe { std::mem::zeroed() };
    for (d, s) in p.name.iter_mut().zip(DEVICE_NAME.bytes()) {
        *d = s as c_char;
    }
    p.uuid = *b"fencehound-vgpu\0";
    p.total_global_mem = TOTAL_MEM as usize;
    p.shared_mem_per_block = SHARED_PER_BLOCK as usize;
    p.regs_per_block = REGS;
    p.warp_size = 32;
    p.mem_pitch = i32::MAX as usize;
    p.max_threads_per_block = 1024;
    p.max_threads_dim = [1024, 1024, 64];
    p.max_grid_size = [i32::MAX, 65535, 65535];
    p.total_const_mem = 64 * 1024;
    p.major = CC_MAJOR;
    p.minor = CC_MINOR;
    p.texture_alignment = 512;
    p.texture_pitch_alignment = 32;
    p.multi_processor_count = NUM_SMS as c_int;
    p.surface_alignment = 512;
    p.concurrent_kernels = 1;
    p.unified_addressing = 1;
    // `cudaMallocManaged` works (host and device coherent at every device operation, not
    // concurrently: `concurrentManagedAccess` stays 0, so programs synchronize before the
    // host touches managed memory, as on devices without concurrent access).
    p.managed_memory = 1;
    p.memory_bus_width = 5120;
    p.l2_cache_size = 40 << 20;
    p.max_threads_per_multi_processor = THREADS_PER_SM;
    p.stream_priorities_supported = 1;
    p.global_l1_cache_supported = 1;
    p.local_l1_cache_supported = 1;
    p.shared_mem_per_multiprocessor = MAX_SHARED as usize + 1024;
    p.regs_per_multiprocessor = REGS;
    p.compute_preemption_supported = 1;
    p.cooperative_launch = 1;
    p.shared_mem_per_block_optin = MAX_SHARED as usize;
    p.max_blocks_per_multi_processor = BLOCKS_PER_SM;
    p.reserved_shared_mem_per_block = 1024;
    p.host_register_supported = 1;
    p.device_numa_id = -1;
    p.host_numa_id = -1;
    p
}

/// `cudaDeviceGetAttribute`: the value of attribute `attr` (numbers of CUDA 13's
/// `enum cudaDeviceAttr`), or `None` for attributes the vgpu does not describe.
pub fn device_attribute(attr: c_int) -> Option<c_int> {
    let p = device_prop();
    let clamp = |v: usize| v.min(i32::MAX as usize) as c_int;
    Some(match attr {
        1 => p.max_threads_per_block,
        2..=4 => p.max_threads_dim[(attr - 2) as usize],
        5..=7 => p.max_grid_size[(attr - 5) as usize],
        8 => clamp(p.shared_mem_per_block),
        9 => clamp(p.total_const_mem),
        10 => p.warp_size,
        11 => clamp(p.mem_pitch),
        12 => p.regs_per_block,
        13 => 1_410_000, // clock rate, kHz (an A100's)
        14 => clamp(p.texture_alignment),
        15 => 1,
        16 => p.multi_processor_count,
        17..=19 => 0,
        20 => 0, // compute mode: default
        30 => clamp(p.surface_alignment),
        31 => p.concurrent_kernels,
        32 => 0,         // ECC
        33..=35 => 0,    // PCI bus, device; TCC driver
        36 => 1_215_000, // memory clock, kHz (an A100's)
        37 => p.memory_bus_width,
        38 => p.l2_cache_size,
        39 => p.max_threads_per_multi_processor,
        40 => 1, // async engines
        41 => p.unified_addressing,
        50 => 0, // PCI domain
        51 => clamp(p.texture_pitch_alignment),
        75 => p.major,
        76 => p.minor,
        78 => p.stream_priorities_supported,
        79 | 80 => 1, // global / local L1 cache
        81 => clamp(p.shared_mem_per_multiprocessor),
        82 => p.regs_per_multiprocessor,
        83 => p.managed_memory,
        84..=86 => 0, // multi-GPU board, board id, host native atomics
        87 => 32,     // single-to-double performance ratio
        88 | 89 => 0, // pageable memory access, concurrent managed access
        90 => p.compute_preemption_supported,
        91 => 0,
        95 => p.cooperative_launch,
        97 => clamp(p.shared_mem_per_block_optin),
        98 => 0,
        99 => p.host_register_supported,
        100 | 101 => 0,
        106 => p.max_blocks_per_multi_processor,
        111 => clamp(p.reserved_shared_mem_per_block),
        _ => return None,
    })
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct FuncAttributes {
    pub shared_size_bytes: usize,
    pub const_size_bytes: usize,
    pub local_size_bytes: usize,
    pub max_threads_per_block: c_int,
    pub num_regs: c_int,
    pub ptx_version: c_int,
    pub binary_version: c_int,
    pub cache_mode_ca: c_int,
    pub max_dynamic_shared_size_bytes: c_int,
    pub preferred_shmem_carveout: c_int,
    pub cluster_dim_must_be_set: c_int,
    pub required_cluster_width: c_int,
    pub required_cluster_height: c_int,
    pub required_cluster_depth: c_int,
    pub cluster_scheduling_policy_preference: c_int,
    pub non_portable_cluster_size_allowed: c_int,
    pub device_node_update_status: c_int,
    pub shared_memory_mode: c_int,
    pub reserved: [c_int; 14],
}

/// `struct cudaPointerAttributes`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct PointerAttributes {
    pub kind: c_int,
    pub device: c_int,
    pub device_pointer: *mut std::ffi::c_void,
    pub host_pointer: *mut std::ffi::c_void,
    pub reserved: [i64; 8],
}

#[cfg(test)]
mod tests {
    #[test]
    fn layouts_match_cuda_13() {
        // sizeof as gcc computes it from CUDA 13.5's driver_types.h.
        assert_eq!(std::mem::size_of::<super::DeviceProp>(), 1008);
        assert_eq!(std::mem::size_of::<super::FuncAttributes>(), 144);
        assert_eq!(std::mem::size_of::<super::PointerAttributes>(), 88);
        assert_eq!(
            std::mem::offset_of!(super::DeviceProp, total_global_mem),
            288
        );
        assert_eq!(super::device_attribute(16), Some(80));
        assert_eq!(super::device_attribute(75), Some(8));
        assert_eq!(super::device_attribute(10_000), None);
    }
}
