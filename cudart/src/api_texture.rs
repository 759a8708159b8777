//! CUDA arrays and texture objects: `cudaMallocArray`/`cudaMalloc3DArray`,
//! `cudaFreeArray`, copies into and out of arrays (`cudaMemcpy2DToArray`,
//! `cudaMemcpyToArray`, `cudaMemcpy2DFromArray`, `cudaMemcpyFromArray`),
//! `cudaGetChannelDesc`, `cudaArrayGetInfo`, `cudaCreateTextureObject` over an array, linear
//! or pitched memory, and `cudaDestroyTextureObject`; surface objects over arrays
//! (`cudaCreateSurfaceObject`, `cudaDestroySurfaceObject`) for `suld.b`/`sust.b`. A child
//! of `api`: copies go through its `copy`, one row at a time.
//!
//! An array is a global allocation of the vgpu holding its elements packed row after row
//! (`width × height × depth` elements of the channel format's size); its handle
//! (`cudaArray_t`) is that allocation's address. A texture object is registered with the
//! vgpu (`fencehound_vgpu::texture`), which a kernel's `tex` reads; what the vgpu does not
//! implement — mipmapped arrays, resource views, sRGB, anisotropy, layered and cubemap
//! arrays, formats other than 8/16/32-bit channels — is refused with
//! `cudaErrorNotSupported` and a message, never read wrongly.

use super::*;
use fencehound_vgpu::texture::{AddressMode, ChannelKind, Format, Resource, Sampler, Texture};

/// A CUDA array: its elements' allocation, size in elements, and format.
#[derive(Clone, Copy, Debug)]
pub struct ArrayInfo {
    pub base: u64,
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    pub desc: ChannelFormatDesc,
    pub format: Format,
    /// The flags it was made with (`cudaArrayGetInfo` gives them back).
    pub flags: c_uint,
}

impl ArrayInfo {
    /// What a texture or surface over the array views.
    fn resource(&self) -> Resource {
        Resource::Array {
            base: self.base,
            width: self.width,
            height: self.height.max(1),
            depth: self.depth.max(1),
        }
    }

    fn row_bytes(&self) -> u64 {
        self.width * self.format.element_bytes()
    }
    fn rows(&self) -> u64 {
        self.height.max(1) * self.depth.max(1)
    }
}

/// The vgpu's format for a channel descriptor (`None`: not one it reads).
fn format_of(d: &ChannelFormatDesc) -> Option<Format> {
    let kind = match d.f {
        0 => ChannelKind::Signed,
        1 => ChannelKind::Unsigned,
        2 => ChannelKind::Float,
        _ => return None,
    };
    let mut bits = [0u8; 4];
    for (b, v) in bits.iter_mut().zip([d.x, d.y, d.z, d.w]) {
        let ok = match kind {
            ChannelKind::Float => matches!(v, 0 | 16 | 32),
            _ => matches!(v, 0 | 8 | 16 | 32),
        };
        if !ok {
            return None;
        }
        *b = v as u8;
    }
    // Channels are x, then y, z, w: no gap before a present one, and at least one.
    if bits[0] == 0 || bits.windows(2).any(|w| w[0] == 0 && w[1] != 0) {
        return None;
    }
    Some(Format { bits, kind })
}

fn malloc_array(
    rt: &mut Runtime,
    what: &str,
    array: *mut u64,
    desc: *const ChannelFormatDesc,
    dims: [usize; 3],
    flags: c_uint,
) -> Result<(), CudaError> {
    if array.is_null() || desc.is_null() || dims[0] == 0 {
        return Err(errors::INVALID_VALUE);
    }
    // SAFETY: API contract (a readable descriptor).
    let d = unsafe { desc.read_unaligned() };
    // cudaArraySurfaceLoadStore (2) and cudaArrayTextureGather (8) change nothing for
    // textures (surface and gather instructions are refused where a kernel has them);
    // layered (1) and cubemap (4) arrays are other shapes.
    if flags & !(2 | 8) != 0 {
        return not_supported(
            rt,
            &format!("{what} with flags {flags:#x}"),
            "the virtual GPU's arrays are plain 1-D, 2-D and 3-D ones (no layers or cube faces)",
        );
    }
    let Some(format) = format_of(&d) else {
        return not_supported(
            rt,
            &format!(
                "{what} with channel format ({}, {}, {}, {}, kind {})",
                d.x, d.y, d.z, d.w, d.f
            ),
            "channels of 8, 16 or 32 bits (floats of 16 or 32), signed, unsigned or float",
        );
    };
    let info = ArrayInfo {
        base: 0,
        width: dims[0] as u64,
        height: dims[1] as u64,
        depth: dims[2] as u64,
        desc: d,
        format,
        flags,
    };
    let bytes = info
        .row_bytes()
        .checked_mul(info.rows())
        .ok_or(errors::MEMORY_ALLOCATION)?;
    let base = rt.malloc(bytes)?;
    rt.arrays.insert(base, ArrayInfo { base, ..info });
    // SAFETY: API contract.
    unsafe { put(array, base) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaMallocArray(
    array: *mut u64,
    desc: *const ChannelFormatDesc,
    width: usize,
    height: usize,
    flags: c_uint,
) -> CudaError {
    device_call("cudaMallocArray", |rt| {
        malloc_array(
            rt,
            "cudaMallocArray",
            array,
            desc,
            [width, height, 0],
            flags,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMalloc3DArray(
    array: *mut u64,
    desc: *const ChannelFormatDesc,
    extent: mem3d::Extent,
    flags: c_uint,
) -> CudaError {
    device_call("cudaMalloc3DArray", |rt| {
        malloc_array(
            rt,
            "cudaMalloc3DArray",
            array,
            desc,
            [extent.width, extent.height, extent.depth],
            flags,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaFreeArray(array: u64) -> CudaError {
    device_call("cudaFreeArray", |rt| {
        if array == 0 {
            return Ok(());
        }
        if rt.arrays.remove(&array).is_none() {
            return Err(errors::INVALID_VALUE);
        }
        rt.free(array)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGetChannelDesc(desc: *mut ChannelFormatDesc, array: u64) -> CudaError {
    host_call("cudaGetChannelDesc", |rt| {
        let a = *rt.arrays.get(&array).ok_or(errors::INVALID_VALUE)?;
        // SAFETY: API contract.
        unsafe { put(desc, a.desc) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaArrayGetInfo(
    desc: *mut ChannelFormatDesc,
    extent: *mut mem3d::Extent,
    flags: *mut c_uint,
    array: u64,
) -> CudaError {
    host_call("cudaArrayGetInfo", |rt| {
        let a = *rt.arrays.get(&array).ok_or(errors::INVALID_VALUE)?;
        // SAFETY: API contract (each pointer may be null).
        unsafe {
            if !desc.is_null() {
                put(desc, a.desc)?;
            }
            if !extent.is_null() {
                put(
                    extent,
                    mem3d::Extent {
                        width: a.width as usize,
                        height: a.height as usize,
                        depth: a.depth as usize,
                    },
                )?;
            }
            if !flags.is_null() {
                put(flags, a.flags)?;
            }
        }
        Ok(())
    })
}

/// A 2-D copy between an array's rows (`offset` bytes into row `row`) and linear memory
/// (`pitch` bytes apart), `width` bytes by `height` rows; `to_array` says which way.
///
/// # Safety
/// The linear side must address the rows it names (the caller's contract, as with CUDA).
#[allow(clippy::too_many_arguments)]
unsafe fn copy_2d(
    rt: &mut Runtime,
    what: &str,
    array: u64,
    offset: usize,
    row: usize,
    linear: u64,
    pitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    to_array: bool,
) -> Result<(), CudaError> {
    let a = *rt.arrays.get(&array).ok_or(errors::INVALID_VALUE)?;
    let (rb, rows) = (a.row_bytes(), a.rows());
    if offset as u64 + width as u64 > rb
        || row as u64 + height as u64 > rows
        || (height > 1 && width > pitch)
    {
        return Err(errors::INVALID_VALUE);
    }
    let kind = array_kind(kind, to_array)?;
    for r in 0..height {
        let at = a.base + (row + r) as u64 * rb + offset as u64;
        let lin = linear + (r * pitch) as u64;
        let (dst, src) = if to_array { (at, lin) } else { (lin, at) };
        // SAFETY: the caller's contract for the linear side; the array side is in range.
        unsafe { copy(rt, what, dst, src, width, kind)? };
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2DToArray(
    dst: u64,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
) -> CudaError {
    device_call("cudaMemcpy2DToArray", |rt| unsafe {
        copy_2d(
            rt,
            "cudaMemcpy2DToArray",
            dst,
            w_offset,
            h_offset,
            src as u64,
            spitch,
            width,
            height,
            kind,
            true,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2DFromArray(
    dst: *mut c_void,
    dpitch: usize,
    src: u64,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: c_int,
) -> CudaError {
    device_call("cudaMemcpy2DFromArray", |rt| unsafe {
        copy_2d(
            rt,
            "cudaMemcpy2DFromArray",
            src,
            w_offset,
            h_offset,
            dst as u64,
            dpitch,
            width,
            height,
            kind,
            false,
        )
    })
}

/// The copy direction a copy into (`to_array`) or out of an array may have: the array's
/// side is device memory.
fn array_kind(kind: c_int, to_array: bool) -> Result<c_int, CudaError> {
    match (kind, to_array) {
        (HOST_TO_DEVICE | DEVICE_TO_DEVICE | DEFAULT, true)
        | (DEVICE_TO_HOST | DEVICE_TO_DEVICE | DEFAULT, false) => Ok(kind),
        _ => Err(errors::INVALID_MEMCPY_DIRECTION),
    }
}

/// `count` bytes starting `offset` bytes into row `row` of the array, as one run (the
/// deprecated `cudaMemcpyToArray`/`FromArray`).
///
/// # Safety
/// The linear side must address `count` bytes (the caller's contract).
#[allow(clippy::too_many_arguments)]
unsafe fn copy_run(
    rt: &mut Runtime,
    what: &str,
    array: u64,
    offset: usize,
    row: usize,
    linear: u64,
    count: usize,
    kind: c_int,
    to_array: bool,
) -> Result<(), CudaError> {
    let a = *rt.arrays.get(&array).ok_or(errors::INVALID_VALUE)?;
    let start = (row as u64)
        .checked_mul(a.row_bytes())
        .and_then(|x| x.checked_add(offset as u64))
        .ok_or(errors::INVALID_VALUE)?;
    if start.saturating_add(count as u64) > a.row_bytes() * a.rows() {
        return Err(errors::INVALID_VALUE);
    }
    let kind = array_kind(kind, to_array)?;
    let at = a.base + start;
    let (dst, src) = if to_array { (at, linear) } else { (linear, at) };
    // SAFETY: the caller's contract for the linear side; the array side is in range.
    unsafe { copy(rt, what, dst, src, count, kind) }
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToArray(
    dst: u64,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    count: usize,
    kind: c_int,
) -> CudaError {
    device_call("cudaMemcpyToArray", |rt| unsafe {
        copy_run(
            rt,
            "cudaMemcpyToArray",
            dst,
            w_offset,
            h_offset,
            src as u64,
            count,
            kind,
            true,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromArray(
    dst: *mut c_void,
    src: u64,
    w_offset: usize,
    h_offset: usize,
    count: usize,
    kind: c_int,
) -> CudaError {
    device_call("cudaMemcpyFromArray", |rt| unsafe {
        copy_run(
            rt,
            "cudaMemcpyFromArray",
            src,
            w_offset,
            h_offset,
            dst as u64,
            count,
            kind,
            false,
        )
    })
}

/// Reads a `T` at byte `off` of a C struct.
///
/// # Safety
/// `p + off` must address a readable `T` (the API contract's struct).
unsafe fn field<T: Copy>(p: *const u8, off: usize) -> T {
    unsafe { (p.add(off) as *const T).read_unaligned() }
}

#[no_mangle]
pub unsafe extern "C" fn cudaCreateTextureObject(
    tex: *mut u64,
    res: *const u8,
    desc: *const u8,
    view: *const c_void,
) -> CudaError {
    device_call("cudaCreateTextureObject", |rt| {
        if tex.is_null() || res.is_null() || desc.is_null() {
            return Err(errors::INVALID_VALUE);
        }
        if !view.is_null() {
            return not_supported(
                rt,
                "cudaCreateTextureObject with a resource view",
                "no views of arrays",
            );
        }
        // struct cudaResourceDesc: resType at 0, the union at 8 (pointers first), flags at 136.
        // SAFETY: API contract (the structs as the CUDA 13 headers lay them out).
        let (res_type, ptr, flags): (c_int, u64, c_uint) =
            unsafe { (field(res, 0), field(res, 8), field(res, 136)) };
        if flags != 0 {
            return Err(errors::INVALID_VALUE);
        }
        let channel = |rt: &mut Runtime| -> Result<Format, CudaError> {
            // SAFETY: as above (the desc at 8 bytes into the union).
            let d: ChannelFormatDesc = unsafe { field(res, 16) };
            match format_of(&d) {
                Some(f) => Ok(f),
                None => {
                    not_supported(
                        rt,
                        &format!(
                            "a texture with channel format ({}, {}, {}, {}, kind {})",
                            d.x, d.y, d.z, d.w, d.f
                        ),
                        "channels of 8, 16 or 32 bits (floats of 16 or 32), signed, unsigned or float",
                    )?;
                    Err(errors::NOT_SUPPORTED)
                }
            }
        };
        let (resource, format) = match res_type {
            0 => {
                let a = rt.arrays.get(&ptr).ok_or(errors::INVALID_VALUE)?;
                (a.resource(), a.format)
            }
            2 => {
                let f = channel(rt)?;
                // SAFETY: as above.
                let bytes: usize = unsafe { field(res, 40) };
                (
                    Resource::Linear {
                        base: ptr,
                        bytes: bytes as u64,
                    },
                    f,
                )
            }
            3 => {
                let f = channel(rt)?;
                // SAFETY: as above.
                let (w, h, pitch): (usize, usize, usize) =
                    unsafe { (field(res, 40), field(res, 48), field(res, 56)) };
                if pitch < w * f.element_bytes() as usize {
                    return Err(errors::INVALID_VALUE);
                }
                (
                    Resource::Pitch2D {
                        base: ptr,
                        width: w as u64,
                        height: h as u64,
                        pitch: pitch as u64,
                    },
                    f,
                )
            }
            _ => {
                return not_supported(
                    rt,
                    "a texture over a mipmapped array",
                    "the virtual GPU has no mipmap levels",
                )
            }
        };
        // struct cudaTextureDesc: addressMode[3] at 0, filterMode 12, readMode 16, sRGB 20,
        // borderColor[4] 24, normalizedCoords 40, maxAnisotropy 44, mipmap fields after.
        // SAFETY: API contract.
        let (modes, filter, read, srgb, border, normalized, aniso): (
            [c_int; 3],
            c_int,
            c_int,
            c_int,
            [f32; 4],
            c_int,
            c_uint,
        ) = unsafe {
            (
                field(desc, 0),
                field(desc, 12),
                field(desc, 16),
                field(desc, 20),
                field(desc, 24),
                field(desc, 40),
                field(desc, 44),
            )
        };
        if srgb != 0 || aniso > 1 {
            return not_supported(
                rt,
                "a texture with sRGB conversion or anisotropic filtering",
                "the virtual GPU fetches without either",
            );
        }
        let mut address = [AddressMode::Wrap; 3];
        for (a, m) in address.iter_mut().zip(modes) {
            *a = match m {
                0 => AddressMode::Wrap,
                1 => AddressMode::Clamp,
                2 => AddressMode::Mirror,
                3 => AddressMode::Border,
                _ => return Err(errors::INVALID_VALUE),
            };
        }
        let t = Texture {
            resource,
            format,
            sampler: Sampler {
                address,
                linear: filter == 1,
                normalized_read: read == 1,
                normalized_coords: normalized != 0,
                border,
            },
        };
        let h = rt.textures().insert(t);
        // SAFETY: API contract.
        unsafe { put(tex, h) }
    })
}

/// Forgets texture or surface object `h` (0: nothing to do).
fn destroy_object(rt: &mut Runtime, h: u64) -> Result<(), CudaError> {
    if h == 0 {
        return Ok(());
    }
    match rt.textures().remove(h) {
        Some(_) => Ok(()),
        None => Err(errors::INVALID_VALUE),
    }
}

#[no_mangle]
pub unsafe extern "C" fn cudaDestroyTextureObject(tex: u64) -> CudaError {
    host_call("cudaDestroyTextureObject", |rt| destroy_object(rt, tex))
}

/// `cudaCreateSurfaceObject`: a CUDA array kernels read and write with `suld`/`sust`
/// (`fencehound_vgpu::texture::surface_address`), registered like a texture object.
#[no_mangle]
pub unsafe extern "C" fn cudaCreateSurfaceObject(surf: *mut u64, res: *const u8) -> CudaError {
    device_call("cudaCreateSurfaceObject", |rt| {
        if surf.is_null() || res.is_null() {
            return Err(errors::INVALID_VALUE);
        }
        // struct cudaResourceDesc, as in cudaCreateTextureObject.
        // SAFETY: API contract.
        let (res_type, ptr): (c_int, u64) = unsafe { (field(res, 0), field(res, 8)) };
        if res_type != 0 {
            return Err(errors::INVALID_VALUE);
        }
        let a = rt.arrays.get(&ptr).ok_or(errors::INVALID_VALUE)?;
        let t = Texture {
            resource: a.resource(),
            format: a.format,
            sampler: Sampler::POINT,
        };
        let h = rt.textures().insert(t);
        // SAFETY: API contract.
        unsafe { put(surf, h) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaDestroySurfaceObject(surf: u64) -> CudaError {
    host_call("cudaDestroySurfaceObject", |rt| destroy_object(rt, surf))
}
