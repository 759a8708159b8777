//! Pitched 3-D memory (`cudaMalloc3D`, `cudaMemcpy3D`, `cudaMemset3D`) and stream-ordered
//! memory pools (`cudaDeviceGetDefaultMemPool`, `cudaMallocFromPoolAsync`, pool
//! attributes). A child of `api`: copies go through its `copy`, one row at a time, so
//! they check ranges and directions exactly as `cudaMemcpy` does. CUDA arrays
//! (`cudaArray_t`) are not implemented: a 3-D copy naming one fails with
//! `cudaErrorNotSupported` and says why.

use super::*;

/// `struct cudaPitchedPtr`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

/// `struct cudaExtent` (width in bytes for linear memory).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Extent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// `struct cudaPos`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Pos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

/// `struct cudaMemcpy3DParms`.
#[repr(C)]
pub struct Memcpy3DParms {
    pub src_array: *mut c_void,
    pub src_pos: Pos,
    pub src_ptr: PitchedPtr,
    pub dst_array: *mut c_void,
    pub dst_pos: Pos,
    pub dst_ptr: PitchedPtr,
    pub extent: Extent,
    pub kind: c_int,
}

#[no_mangle]
pub unsafe extern "C" fn cudaMalloc3D(out: *mut PitchedPtr, extent: Extent) -> CudaError {
    device_call("cudaMalloc3D", |rt| {
        // Rows aligned to 512 bytes, as cudaMallocPitch's.
        let pitch = extent.width.div_ceil(512).max(1) * 512;
        let bytes = pitch
            .checked_mul(extent.height.max(1))
            .and_then(|b| b.checked_mul(extent.depth.max(1)))
            .ok_or(errors::MEMORY_ALLOCATION)?;
        let base = rt.malloc(bytes as u64)?;
        // SAFETY: API contract.
        unsafe {
            put(
                out,
                PitchedPtr {
                    ptr: base as *mut c_void,
                    pitch,
                    xsize: extent.width,
                    ysize: extent.height,
                },
            )
        }
    })
}

/// The address of byte `x` of row `y` of slice `z` of a pitched block.
fn at(p: &PitchedPtr, x: usize, y: usize, z: usize) -> Option<u64> {
    let row = z.checked_mul(p.ysize)?.checked_add(y)?;
    let off = row.checked_mul(p.pitch)?.checked_add(x)?;
    (p.ptr as u64).checked_add(off as u64)
}

/// A 3-D copy: `extent.depth` slices of `extent.height` rows of `extent.width` bytes.
fn copy_3d(rt: &mut Runtime, name: &str, p: *const Memcpy3DParms) -> Result<(), CudaError> {
    // SAFETY: API contract: `p` points to a cudaMemcpy3DParms.
    let Some(p) = (unsafe { p.as_ref() }) else {
        return Err(errors::INVALID_VALUE);
    };
    if !p.src_array.is_null() || !p.dst_array.is_null() {
        return not_supported(
            rt,
            &format!("{name} with a CUDA array"),
            "arrays are not implemented",
        );
    }
    let e = p.extent;
    for z in 0..e.depth {
        for y in 0..e.height {
            let (Some(src), Some(dst)) = (
                at(&p.src_ptr, p.src_pos.x, p.src_pos.y + y, p.src_pos.z + z),
                at(&p.dst_ptr, p.dst_pos.x, p.dst_pos.y + y, p.dst_pos.z + z),
            ) else {
                return Err(errors::INVALID_VALUE);
            };
            // SAFETY: host rows lie inside the host blocks the program described (the
            // API contract); device rows are checked by `copy`.
            unsafe { copy(rt, name, dst, src, e.width, p.kind)? };
        }
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy3D(p: *const Memcpy3DParms) -> CudaError {
    device_call("cudaMemcpy3D", |rt| copy_3d(rt, "cudaMemcpy3D", p))
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy3D_ptds(p: *const Memcpy3DParms) -> CudaError {
    device_call("cudaMemcpy3D_ptds", |rt| {
        copy_3d(rt, "cudaMemcpy3D_ptds", p)
    })
}

macro_rules! memcpy3d_async_entry {
    ($($name:ident),*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(p: *const Memcpy3DParms, stream: *mut c_void) -> CudaError {
            device_call(stringify!($name), |rt| {
                check_stream(rt, stream)?;
                capture_unsupported(rt, stream as usize, stringify!($name))?;
                copy_3d(rt, stringify!($name), p)
            })
        }
    )*};
}
memcpy3d_async_entry!(cudaMemcpy3DAsync, cudaMemcpy3DAsync_ptsz);

/// Sets `extent` (width in bytes) of a pitched block to `value`.
fn set_3d(
    rt: &mut Runtime,
    name: &str,
    p: PitchedPtr,
    value: c_int,
    e: Extent,
) -> Result<(), CudaError> {
    let row = vec![value as u8; e.width];
    for z in 0..e.depth {
        for y in 0..e.height {
            let a = at(&p, 0, y, z).ok_or(errors::INVALID_VALUE)?;
            rt.write_device(name, a, &row)?;
        }
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemset3D(p: PitchedPtr, value: c_int, e: Extent) -> CudaError {
    device_call("cudaMemset3D", |rt| set_3d(rt, "cudaMemset3D", p, value, e))
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemset3D_ptds(p: PitchedPtr, value: c_int, e: Extent) -> CudaError {
    device_call("cudaMemset3D_ptds", |rt| {
        set_3d(rt, "cudaMemset3D_ptds", p, value, e)
    })
}

macro_rules! memset3d_async_entry {
    ($($name:ident),*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(p: PitchedPtr, value: c_int, e: Extent, stream: *mut c_void) -> CudaError {
            device_call(stringify!($name), |rt| {
                check_stream(rt, stream)?;
                capture_unsupported(rt, stream as usize, stringify!($name))?;
                set_3d(rt, stringify!($name), p, value, e)
            })
        }
    )*};
}
memset3d_async_entry!(cudaMemset3DAsync, cudaMemset3DAsync_ptsz);

// ---- memory pools -------------------------------------------------------------------

/// The device's default pool handle (one device).
const DEFAULT_POOL: usize = 0x9001;

fn check_pool(rt: &Runtime, pool: *mut c_void) -> Result<(), CudaError> {
    let p = pool as usize;
    if p == DEFAULT_POOL || rt.pools.contains_key(&p) {
        Ok(())
    } else {
        Err(errors::INVALID_VALUE)
    }
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetDefaultMemPool(
    pool: *mut *mut c_void,
    device: c_int,
) -> CudaError {
    host_call("cudaDeviceGetDefaultMemPool", |_| {
        if device != 0 {
            return Err(errors::INVALID_DEVICE);
        }
        // SAFETY: API contract.
        unsafe { put(pool, DEFAULT_POOL as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetMemPool(pool: *mut *mut c_void, device: c_int) -> CudaError {
    host_call("cudaDeviceGetMemPool", |rt| {
        if device != 0 {
            return Err(errors::INVALID_DEVICE);
        }
        let current = rt.current_pool.unwrap_or(DEFAULT_POOL);
        // SAFETY: API contract.
        unsafe { put(pool, current as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaDeviceSetMemPool(device: c_int, pool: *mut c_void) -> CudaError {
    host_call("cudaDeviceSetMemPool", |rt| {
        if device != 0 {
            return Err(errors::INVALID_DEVICE);
        }
        check_pool(rt, pool)?;
        rt.current_pool = Some(pool as usize);
        Ok(())
    })
}

/// `cudaMemPoolCreate`: the properties describe where and how memory is allocated; on
/// the vgpu every pool allocates global memory, so they are not read.
#[no_mangle]
pub unsafe extern "C" fn cudaMemPoolCreate(
    pool: *mut *mut c_void,
    props: *const c_void,
) -> CudaError {
    host_call("cudaMemPoolCreate", |rt| {
        if props.is_null() {
            return Err(errors::INVALID_VALUE);
        }
        let h = rt.handle();
        rt.pools.insert(h, Default::default());
        // SAFETY: API contract.
        unsafe { put(pool, h as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemPoolDestroy(pool: *mut c_void) -> CudaError {
    host_call("cudaMemPoolDestroy", |rt| {
        if pool as usize == DEFAULT_POOL {
            return Err(errors::INVALID_VALUE);
        }
        rt.pools
            .remove(&(pool as usize))
            .map(|_| ())
            .ok_or(errors::INVALID_VALUE)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemPoolTrimTo(pool: *mut c_void, _keep: usize) -> CudaError {
    host_call("cudaMemPoolTrimTo", |rt| check_pool(rt, pool))
}

/// Pool attributes (`enum cudaMemPoolAttr`): the reuse flags (1–3, `int`) and the release
/// threshold (4, `cuuint64_t`) are kept as set; the reserved and used byte counts (5–8)
/// report the live allocations; the high-water marks (6, 8) may only be reset to 0.
fn pool_attribute(
    name: &str,
    pool: *mut c_void,
    attr: c_int,
    value: *mut c_void,
    set: bool,
) -> CudaError {
    host_call(name, |rt| {
        check_pool(rt, pool)?;
        if value.is_null() {
            return Err(errors::INVALID_VALUE);
        }
        let used = rt.bytes_allocated();
        let state = rt.pools.entry(pool as usize).or_default();
        // SAFETY: API contract: `value` points to an int (1–3) or a 64-bit value (4–8).
        unsafe {
            match (attr, set) {
                (1..=3, true) => state.flags[attr as usize - 1] = *(value as *const c_int),
                (1..=3, false) => *(value as *mut c_int) = state.flags[attr as usize - 1],
                (4, true) => state.release_threshold = *(value as *const u64),
                (4, false) => *(value as *mut u64) = state.release_threshold,
                (6 | 8, true) if *(value as *const u64) == 0 => {}
                (5..=8, false) => *(value as *mut u64) = used,
                _ => return Err(errors::INVALID_VALUE),
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemPoolSetAttribute(
    pool: *mut c_void,
    attr: c_int,
    value: *mut c_void,
) -> CudaError {
    pool_attribute("cudaMemPoolSetAttribute", pool, attr, value, true)
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemPoolGetAttribute(
    pool: *mut c_void,
    attr: c_int,
    value: *mut c_void,
) -> CudaError {
    pool_attribute("cudaMemPoolGetAttribute", pool, attr, value, false)
}

macro_rules! malloc_from_pool_entry {
    ($($name:ident),*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(ptr: *mut *mut c_void, size: usize, pool: *mut c_void, stream: *mut c_void) -> CudaError {
            device_call(stringify!($name), |rt| {
                check_stream(rt, stream)?;
                check_pool(rt, pool)?;
                if ptr.is_null() {
                    return Err(errors::INVALID_VALUE);
                }
                let p = rt.malloc(size as u64)?;
                // SAFETY: API contract.
                unsafe { put(ptr, p as *mut c_void) }
            })
        }
    )*};
}
malloc_from_pool_entry!(cudaMallocFromPoolAsync, cudaMallocFromPoolAsync_ptsz);
