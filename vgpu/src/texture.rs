//! Texture objects and `tex` fetches (PTX ISA §9.7.9.3, unified mode: the texture is a
//! 64-bit texture-object handle in a register), and surface objects with their `suld.b`
//! loads and `sust.b` stores ([`surface_address`]).
//!
//! A texture is a view of device memory — a linear range, a pitched 2-D range, or a CUDA
//! array (row-major, rows of `width` elements, kept in a global allocation of its own) —
//! with a channel format and a sampler: per-dimension address modes, point or linear
//! filtering, element or normalized-float reads, normalized or texel coordinates. The
//! host (the CUDA runtime's `cudaCreateTextureObject`) registers one under a handle with
//! [`Textures::insert`]; a kernel's `tex` reads it by that handle.
//!
//! A fetch reads memory as it is, without the write buffers or the race check: the
//! texture path is read-only and not coherent with the kernel's own writes (CUDA leaves a
//! fetch of memory written by the same launch undefined), so what a texture sees is what
//! the previous operations left. Filtering follows the CUDA programming guide's texture
//! fetching appendix: point sampling takes texel `floor(x)`; linear filtering blends the
//! two (four, eight) texels around `x - 0.5` with a weight kept to 8 fractional bits. A
//! texel outside the texture under the border mode, or an integer-coordinate fetch
//! outside a linear texture (`tex1Dfetch`), reads zeros. Channels the format does not
//! have read as 0.

use crate::error::MemError;
use crate::memory::{Location, Memory};
use std::collections::HashMap;

/// What a texture views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// `bytes` bytes at `base` (a 1-D texture of `bytes / element` elements).
    Linear { base: u64, bytes: u64 },
    /// `height` rows of `width` elements, `pitch` bytes apart, at `base`.
    Pitch2D {
        base: u64,
        width: u64,
        height: u64,
        pitch: u64,
    },
    /// A CUDA array: `depth` layers of `height` rows of `width` elements, packed, at
    /// `base` (`height`, `depth` at least 1).
    Array {
        base: u64,
        width: u64,
        height: u64,
        depth: u64,
    },
}

/// How a channel's bits are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    Signed,
    Unsigned,
    Float,
}

/// A channel format (`cudaChannelFormatDesc`): bits per channel x, y, z, w (0: absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub bits: [u8; 4],
    pub kind: ChannelKind,
}

impl Format {
    /// Bytes per element.
    pub fn element_bytes(&self) -> u64 {
        self.bits.iter().map(|&b| b as u64).sum::<u64>() / 8
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressMode {
    Wrap,
    Clamp,
    Mirror,
    Border,
}

/// The sampler (`cudaTextureDesc`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampler {
    pub address: [AddressMode; 3],
    pub linear: bool,
    /// `cudaReadModeNormalizedFloat`: 8- and 16-bit integer channels read as [0, 1]
    /// (unsigned) or [-1, 1] (signed).
    pub normalized_read: bool,
    /// Coordinates in [0, 1) instead of texels.
    pub normalized_coords: bool,
    pub border: [f32; 4],
}

impl Sampler {
    /// Texel coordinates clamped at the edges, no filtering, raw reads: what a surface
    /// object reads with.
    pub const POINT: Sampler = Sampler {
        address: [AddressMode::Clamp; 3],
        linear: false,
        normalized_read: false,
        normalized_coords: false,
        border: [0.0; 4],
    };
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Texture {
    pub resource: Resource,
    pub format: Format,
    pub sampler: Sampler,
}

impl Texture {
    /// Width, height, depth in elements.
    fn extent(&self) -> [u64; 3] {
        match self.resource {
            Resource::Linear { bytes, .. } => [bytes / self.format.element_bytes().max(1), 1, 1],
            Resource::Pitch2D { width, height, .. } => [width, height, 1],
            Resource::Array {
                width,
                height,
                depth,
                ..
            } => [width, height.max(1), depth.max(1)],
        }
    }

    fn address_of(&self, at: [u64; 3]) -> u64 {
        let e = self.format.element_bytes();
        match self.resource {
            Resource::Linear { base, .. } => base + at[0] * e,
            Resource::Pitch2D { base, pitch, .. } => base + at[1] * pitch + at[0] * e,
            Resource::Array {
                base,
                width,
                height,
                ..
            } => base + ((at[2] * height.max(1) + at[1]) * width + at[0]) * e,
        }
    }
}

/// The live texture objects, by handle.
#[derive(Debug, Clone, Default)]
pub struct Textures {
    map: HashMap<u64, Texture>,
    next: u64,
}

impl Textures {
    /// Registers `t`; its handle (never 0).
    pub fn insert(&mut self, t: Texture) -> u64 {
        self.next += 1;
        let h = self.next;
        self.map.insert(h, t);
        h
    }

    pub fn remove(&mut self, h: u64) -> Option<Texture> {
        self.map.remove(&h)
    }

    pub fn get(&self, h: u64) -> Option<&Texture> {
        self.map.get(&h)
    }
}

/// The type a `tex` returns (its first type modifier).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TexType {
    S32,
    U32,
    F32,
}

/// Why a fetch failed.
#[derive(Debug, Clone, PartialEq)]
pub enum FetchError {
    /// No live texture object has this handle.
    NoTexture(u64),
    Memory(MemError),
}

/// One texel's channels, as numbers (integers exactly, floats widened).
type Texel = [f64; 4];

fn read_texel(mem: &Memory, t: &Texture, at: [u64; 3]) -> Result<Texel, MemError> {
    let f = t.format;
    let bytes = f.element_bytes() as usize;
    let mut buf = [0u8; 16];
    mem.read(Location::Global(t.address_of(at)), &mut buf[..bytes])?;
    let mut out = [0.0; 4];
    let mut off = 0usize;
    for (o, &bits) in out.iter_mut().zip(&f.bits) {
        let b = bits as usize;
        if b == 0 {
            continue;
        }
        let n = b / 8;
        let mut raw = 0u64;
        for k in 0..n {
            raw |= (buf[off + k] as u64) << (8 * k);
        }
        off += n;
        *o = match f.kind {
            ChannelKind::Unsigned => raw as f64,
            ChannelKind::Signed => {
                let shift = 64 - b as u32;
                (((raw << shift) as i64) >> shift) as f64
            }
            ChannelKind::Float => match b {
                16 => ::half::f16::from_bits(raw as u16).to_f64(),
                32 => f32::from_bits(raw as u32) as f64,
                _ => f64::from_bits(raw),
            },
        };
        if t.sampler.normalized_read && f.kind != ChannelKind::Float && b <= 16 {
            *o = match f.kind {
                ChannelKind::Unsigned => *o / ((1u64 << b) - 1) as f64,
                _ => (*o / ((1u64 << (b - 1)) - 1) as f64).max(-1.0),
            };
        }
    }
    Ok(out)
}

/// A texel index along one dimension of size `n` under address mode `m`: `None` for the
/// border.
fn address(i: i64, n: u64, m: AddressMode) -> Option<u64> {
    let n = n.max(1) as i64;
    match m {
        AddressMode::Clamp => Some(i.clamp(0, n - 1) as u64),
        AddressMode::Border => (0..n).contains(&i).then_some(i as u64),
        AddressMode::Wrap => Some(i.rem_euclid(n) as u64),
        AddressMode::Mirror => {
            let p = i.rem_euclid(2 * n);
            Some(if p < n { p } else { 2 * n - 1 - p } as u64)
        }
    }
}

/// The texel at integer coordinates `at` (per dimension), through the address modes
/// (the border colour outside).
fn texel_at(mem: &Memory, t: &Texture, at: [i64; 3], dims: usize) -> Result<Texel, MemError> {
    let ext = t.extent();
    let mut idx = [0u64; 3];
    for d in 0..3 {
        if d >= dims {
            continue;
        }
        match address(at[d], ext[d], t.sampler.address[d]) {
            Some(i) => idx[d] = i,
            None => return Ok(t.sampler.border.map(|x| x as f64)),
        }
    }
    read_texel(mem, t, idx)
}

/// Up to three 32-bit coordinates as signed integers (0 past the last).
fn signed(coords: &[u32]) -> [i64; 3] {
    let mut a = [0i64; 3];
    for (x, &c) in a.iter_mut().zip(coords) {
        *x = c as i32 as i64;
    }
    a
}

/// A `tex` fetch of one lane: `dims` coordinates, integer (`int_coords`, the raw
/// 32-bit values as signed texel indices) or `f32` bits; four 32-bit results of type
/// `ty`.
pub fn fetch(
    mem: &Memory,
    textures: &Textures,
    handle: u64,
    coords: &[u32],
    int_coords: bool,
    ty: TexType,
) -> Result<[u32; 4], FetchError> {
    let t = textures.get(handle).ok_or(FetchError::NoTexture(handle))?;
    let dims = coords.len().min(3);
    let ext = t.extent();
    let v: Texel = if int_coords {
        let a = signed(coords);
        if matches!(t.resource, Resource::Linear { .. }) {
            // tex1Dfetch: no address modes; outside the range reads zeros.
            if a[0] < 0 || a[0] as u64 >= ext[0] {
                [0.0; 4]
            } else {
                read_texel(mem, t, [a[0] as u64, 0, 0]).map_err(FetchError::Memory)?
            }
        } else {
            texel_at(mem, t, a, dims).map_err(FetchError::Memory)?
        }
    } else {
        let mut x = [0f64; 3];
        for d in 0..dims {
            let c = f32::from_bits(coords[d]) as f64;
            x[d] = if t.sampler.normalized_coords {
                c * ext[d] as f64
            } else {
                c
            };
        }
        if t.sampler.linear {
            // The texels around x - 0.5, weights to 8 fractional bits.
            let mut base = [0i64; 3];
            let mut w = [0f64; 3];
            for d in 0..dims {
                let xb = x[d] - 0.5;
                let f = xb.floor();
                base[d] = f as i64;
                w[d] = ((xb - f) * 256.0).round() / 256.0;
            }
            let mut acc = [0f64; 4];
            for corner in 0..(1usize << dims) {
                let mut at = base;
                let mut weight = 1.0;
                for d in 0..dims {
                    let hi = corner >> d & 1 == 1;
                    at[d] += hi as i64;
                    weight *= if hi { w[d] } else { 1.0 - w[d] };
                }
                let tx = texel_at(mem, t, at, dims).map_err(FetchError::Memory)?;
                for c in 0..4 {
                    acc[c] += weight * tx[c];
                }
            }
            acc
        } else {
            let mut at = [0i64; 3];
            for d in 0..dims {
                at[d] = x[d].floor() as i64;
            }
            texel_at(mem, t, at, dims).map_err(FetchError::Memory)?
        }
    };
    Ok(v.map(|c| match ty {
        TexType::F32 => (c as f32).to_bits(),
        TexType::S32 => c as i32 as u32,
        TexType::U32 => c as u32,
    }))
}

/// What a surface access (`suld`, `sust`) does outside the surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boundary {
    /// Fault.
    Trap,
    /// Access the nearest location inside.
    Clamp,
    /// Read zeros; drop the store.
    Zero,
}

/// Why a surface access failed.
#[derive(Debug, Clone, PartialEq)]
pub enum SurfaceError {
    /// No live surface (or texture) object has this handle, or it is no array.
    NoSurface(u64),
    /// Outside the surface under [`Boundary::Trap`]: the coordinates.
    OutOfRange(Vec<i64>),
}

/// The address of a surface access of `bytes` bytes at `coords` (PTX: `x` in bytes, `y`
/// and `z` in rows and layers) of the array behind `handle`: `None` when it falls
/// outside under [`Boundary::Zero`]. Surfaces are CUDA arrays
/// (`cudaCreateSurfaceObject`); their loads and stores, like texture fetches, go to
/// memory directly, not through the write buffers or the race check.
pub fn surface_address(
    textures: &Textures,
    handle: u64,
    coords: &[u32],
    bytes: u32,
    mode: Boundary,
) -> Result<Option<u64>, SurfaceError> {
    let t = textures
        .get(handle)
        .filter(|t| matches!(t.resource, Resource::Array { .. }))
        .ok_or(SurfaceError::NoSurface(handle))?;
    let ext = t.extent();
    let row = (ext[0] * t.format.element_bytes()) as i64;
    let limits = [row - bytes as i64, ext[1] as i64 - 1, ext[2] as i64 - 1];
    let mut at = signed(coords);
    let inside = (0..3).all(|k| at[k] >= 0 && at[k] <= limits[k]);
    if !inside {
        match mode {
            Boundary::Trap => {
                return Err(SurfaceError::OutOfRange(at[..coords.len().min(3)].to_vec()))
            }
            Boundary::Zero => return Ok(None),
            Boundary::Clamp => {
                for k in 0..3 {
                    at[k] = at[k].clamp(0, limits[k].max(0));
                }
            }
        }
    }
    let Resource::Array { base, .. } = t.resource else {
        return Err(SurfaceError::NoSurface(handle));
    };
    Ok(Some(
        base + ((at[2] as u64 * ext[1] + at[1] as u64) * row as u64) + at[0] as u64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_modes_on_four_texels() {
        let m = |i, mode| address(i, 4, mode);
        for (i, clamp, wrap, mirror, border) in [
            (-2, Some(0), Some(2), Some(1), None),
            (-1, Some(0), Some(3), Some(0), None),
            (0, Some(0), Some(0), Some(0), Some(0)),
            (3, Some(3), Some(3), Some(3), Some(3)),
            (4, Some(3), Some(0), Some(3), None),
            (5, Some(3), Some(1), Some(2), None),
            (9, Some(3), Some(1), Some(1), None),
        ] {
            assert_eq!(m(i, AddressMode::Clamp), clamp, "clamp {i}");
            assert_eq!(m(i, AddressMode::Wrap), wrap, "wrap {i}");
            assert_eq!(m(i, AddressMode::Mirror), mirror, "mirror {i}");
            assert_eq!(m(i, AddressMode::Border), border, "border {i}");
        }
    }

    #[test]
    fn surface_boundary_modes() {
        let mut tex = Textures::default();
        // 4 x 2 elements of 4 bytes: rows of 16 bytes at 0x1000.
        let h = tex.insert(Texture {
            resource: Resource::Array {
                base: 0x1000,
                width: 4,
                height: 2,
                depth: 1,
            },
            format: Format {
                bits: [32, 0, 0, 0],
                kind: ChannelKind::Float,
            },
            sampler: Sampler::POINT,
        });
        let at = |c: &[i32], bytes, mode| {
            let c: Vec<u32> = c.iter().map(|&x| x as u32).collect();
            surface_address(&tex, h, &c, bytes, mode)
        };
        assert_eq!(at(&[4, 1], 4, Boundary::Trap), Ok(Some(0x1000 + 16 + 4)));
        // The last 8 bytes of a row are inside; one byte further is not.
        assert_eq!(at(&[8, 0], 8, Boundary::Trap), Ok(Some(0x1008)));
        assert_eq!(
            at(&[9, 0], 8, Boundary::Trap),
            Err(SurfaceError::OutOfRange(vec![9, 0]))
        );
        assert_eq!(at(&[9, 0], 8, Boundary::Zero), Ok(None));
        assert_eq!(
            at(&[100, 5], 4, Boundary::Clamp),
            Ok(Some(0x1000 + 16 + 12))
        );
        assert_eq!(at(&[-4, -1], 4, Boundary::Clamp), Ok(Some(0x1000)));
        assert_eq!(
            surface_address(&tex, 77, &[0], 4, Boundary::Trap),
            Err(SurfaceError::NoSurface(77))
        );
    }

    /// A 1-D array of signed 8-bit pairs read as normalized floats, and float texels
    /// filtered linearly with 8-bit weights.
    #[test]
    fn fetches_convert_and_filter() {
        let mut mem = Memory::default();
        let s8 = mem.global.alloc(8, 256, "s8".into()).unwrap();
        mem.write(
            Location::Global(s8),
            &[(-128i8) as u8, 127, 64, 0, 1, (-1i8) as u8, 0, 0],
        )
        .unwrap();
        let f = mem.global.alloc(16, 256, "f".into()).unwrap();
        let vals: Vec<u8> = [10.0f32, 20.0, 30.0, 40.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        mem.write(Location::Global(f), &vals).unwrap();
        let sampler = Sampler {
            normalized_read: true,
            ..Sampler::POINT
        };
        let mut tex = Textures::default();
        let a = tex.insert(Texture {
            resource: Resource::Array {
                base: s8,
                width: 4,
                height: 1,
                depth: 1,
            },
            format: Format {
                bits: [8, 8, 0, 0],
                kind: ChannelKind::Signed,
            },
            sampler,
        });
        let b = tex.insert(Texture {
            resource: Resource::Array {
                base: f,
                width: 4,
                height: 1,
                depth: 1,
            },
            format: Format {
                bits: [32, 0, 0, 0],
                kind: ChannelKind::Float,
            },
            sampler: Sampler {
                linear: true,
                normalized_read: false,
                ..sampler
            },
        });
        let x = |v: f32| [v.to_bits()];
        let got = fetch(&mem, &tex, a, &x(0.5), false, TexType::F32).unwrap();
        assert_eq!(got.map(f32::from_bits), [-1.0, 1.0, 0.0, 0.0]);
        let got = fetch(&mem, &tex, a, &x(1.5), false, TexType::F32).unwrap();
        assert_eq!(got.map(f32::from_bits), [64.0 / 127.0, 0.0, 0.0, 0.0]);
        // Between texels 1 and 2 (x - 0.5 = 1.25): 20 + 0.25 × 10; at 1.3, the weight
        // 0.3 is kept as 77/256.
        let got = fetch(&mem, &tex, b, &x(1.75), false, TexType::F32).unwrap();
        assert_eq!(f32::from_bits(got[0]), 22.5);
        let got = fetch(&mem, &tex, b, &x(1.8), false, TexType::F32).unwrap();
        assert_eq!(f32::from_bits(got[0]), (20.0 + 10.0 * 77.0 / 256.0) as f32);
        // Past the end, clamped: the last texel.
        let got = fetch(&mem, &tex, b, &x(9.0), false, TexType::F32).unwrap();
        assert_eq!(f32::from_bits(got[0]), 40.0);
        assert_eq!(
            fetch(&mem, &tex, 99, &x(0.0), false, TexType::F32),
            Err(FetchError::NoTexture(99))
        );
    }
}
