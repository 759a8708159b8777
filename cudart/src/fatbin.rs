//! Fat binaries as nvcc 13 embeds them, and the PTX inside.
//!
//! What we found by reading the binaries nvcc 13.5 produces (`.nv_fatbin` and
//! `.nvFatBinSegment` sections, `--keep` intermediates, `crt/host_runtime.h`); every
//! integer is little-endian:
//!
//! * `__cudaRegisterFatBinary` gets a **wrapper** (`__fatBinC_Wrapper_t`, in
//!   `.nvFatBinSegment`): `u32 magic = 0x466243b1`, `u32 version` (1; 2 is the `-rdc`
//!   device-link stub, whose fat binary holds the linked machine code and no PTX), `u64
//!   data` (pointer to the fat binary), `u64 filename_or_fatbins` (version 2: the
//!   NULL-terminated array of the compilation units' own fat binaries, which hold their
//!   PTX — `crt/link.stub`'s `__cudaPrelinkedFatbins`; see [`read_wrapper`]).
//! * The **fat binary** (`.nv_fatbin`): a 16-byte header `u32 magic = 0xBA55ED50`,
//!   `u16 version = 1`, `u16 header_size = 16`, `u64 size` of the entries that follow.
//! * Each **entry** starts with its own header: `u16 kind` (1 PTX, 2 ELF cubin, 256 a
//!   `--concat` bundle), `u16` (0x0101), `u32 header_size`, `u64 payload_size`,
//!   `u32 compressed_size`, `u32`, `u16 minor`, `u16 major` (the PTX ISA or cubin
//!   version), `u32 arch` (80 for sm_80), `u32 name_offset`, `u32 name_len` (the
//!   compilation unit, relative to the entry), `u64 flags`, `u64`, `u64
//!   decompressed_size`. The payload follows at `entry + header_size`; the next entry at
//!   `entry + header_size + payload_size`.
//! * **Compression** (`flags`): `0x2000` LZ4 block (`--compress-mode=speed`), `0x8000`
//!   zstd frame (`default`, `size`, `balance`), neither for `--compress-mode=none`. The
//!   payload holds `compressed_size` bytes of it (the rest is padding).
//!   `decompressed_size` is the PTX length. The default nvcc build (`-arch=sm_XX`) has a
//!   cubin entry and a zstd-compressed PTX entry.
//! * A **`--concat`** bundle (kind 256) compresses several entries as one: its header is
//!   followed, at offset 64, by `u32 count`, `u32 table_size`, then `count` 80-byte
//!   sub-headers laid out like entry headers, whose `header_size` field is instead the
//!   offset of that entry's bytes in the decompressed payload.
//!
//! The PTX text may end with NUL padding, which is cut. Of several PTX entries the one for
//! the highest architecture is used (its PTX is what the vgpu parses; they differ only in
//! `.target`).

use std::fmt;

pub const WRAPPER_MAGIC: u32 = 0x4662_43b1;
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;

const KIND_PTX: u16 = 1;
const KIND_ELF: u16 = 2;
const KIND_CONCAT: u16 = 256;
const FLAG_LZ4: u64 = 0x2000;
const FLAG_ZSTD: u64 = 0x8000;
/// Decompressed PTX larger than this is refused (a corrupt size field must not make us
/// allocate gigabytes).
const MAX_PTX: u64 = 1 << 30;

/// Something about a fat binary we cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatbinError(pub String);

impl fmt::Display for FatbinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FatbinError {}

fn err<T>(s: impl Into<String>) -> Result<T, FatbinError> {
    Err(FatbinError(s.into()))
}

/// One PTX text found in a fat binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxEntry {
    /// `sm_80` as 80.
    pub arch: u32,
    /// The compilation unit's name, when the entry records one.
    pub name: String,
    pub text: String,
}

/// What the entries of a fat binary are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contents {
    pub ptx: Vec<PtxEntry>,
    /// Architectures of cubin (SASS) entries, which the vgpu cannot run.
    pub cubins: Vec<u32>,
}

impl Contents {
    /// The PTX entry for the highest architecture.
    pub fn best_ptx(&self) -> Option<&PtxEntry> {
        self.ptx.iter().max_by_key(|e| e.arch)
    }
}

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// The size of the fat binary starting at `header` (header included), from its first
/// 16 bytes.
pub fn fatbin_size(header: &[u8; 16]) -> Result<u64, FatbinError> {
    let magic = u32_at(header, 0).unwrap_or(0);
    if magic != FATBIN_MAGIC {
        return err(format!(
            "not a fat binary (magic {magic:#010x}, expected {FATBIN_MAGIC:#010x})"
        ));
    }
    let header_size = u16_at(header, 6).unwrap_or(0) as u64;
    let size = u64_at(header, 8).unwrap_or(0);
    if header_size < 16 || size > 1 << 32 {
        return err(format!(
            "fat binary header has implausible sizes (header {header_size}, entries {size})"
        ));
    }
    Ok(header_size + size)
}

/// Reads every entry of a fat binary (`bytes` starts at its header and holds at least
/// [`fatbin_size`] bytes).
pub fn parse(bytes: &[u8]) -> Result<Contents, FatbinError> {
    let head: &[u8; 16] = bytes
        .get(..16)
        .and_then(|h| h.try_into().ok())
        .ok_or_else(|| FatbinError("fat binary shorter than its header".into()))?;
    let total = fatbin_size(head)? as usize;
    let header_size = u16_at(bytes, 6).unwrap_or(16) as usize;
    let Some(body) = bytes.get(header_size..total) else {
        return err("fat binary is truncated");
    };
    let mut out = Contents::default();
    let mut at = 0usize;
    while at + 64 <= body.len() {
        let e = &body[at..];
        let trunc = || FatbinError(format!("fat binary entry at offset {at} is truncated"));
        let kind = u16_at(e, 0).ok_or_else(trunc)?;
        let hsize = u32_at(e, 4).ok_or_else(trunc)? as usize;
        let psize = u64_at(e, 8).ok_or_else(trunc)? as usize;
        let payload = hsize
            .checked_add(psize)
            .and_then(|end| e.get(hsize..end))
            .ok_or_else(trunc)?;
        let header = e.get(..hsize).ok_or_else(trunc)?;
        match kind {
            KIND_PTX => out.ptx.push(ptx_entry(header, payload, None)?),
            KIND_ELF => out.cubins.push(u32_at(header, 28).unwrap_or(0)),
            KIND_CONCAT => concat_bundle(header, payload, &mut out)?,
            // Other kinds (e.g. NVVM IR) carry nothing the vgpu can run.
            _ => {}
        }
        at += hsize + psize;
    }
    Ok(out)
}

fn entry_name(header: &[u8]) -> String {
    let off = u32_at(header, 32).unwrap_or(0) as usize;
    let len = u32_at(header, 36).unwrap_or(0) as usize;
    header
        .get(off..off.saturating_add(len))
        .map(|n| {
            String::from_utf8_lossy(n)
                .trim_end_matches('\0')
                .to_string()
        })
        .unwrap_or_default()
}

/// The bytes of an entry's payload, decompressed per its flags.
fn decompress(header: &[u8], payload: &[u8]) -> Result<Vec<u8>, FatbinError> {
    let flags = u64_at(header, 40).unwrap_or(0);
    let csize = u32_at(header, 16).unwrap_or(0) as usize;
    let dsize = u64_at(header, 56).unwrap_or(0);
    if dsize > MAX_PTX {
        return err(format!("entry claims {dsize} decompressed bytes"));
    }
    let data = payload.get(..csize.min(payload.len())).unwrap_or(payload);
    if flags & FLAG_ZSTD != 0 {
        let mut out = Vec::with_capacity(dsize as usize);
        let mut dec = ruzstd::decoding::StreamingDecoder::new(data)
            .map_err(|e| FatbinError(format!("zstd-compressed entry: {e}")))?;
        std::io::Read::read_to_end(&mut dec, &mut out)
            .map_err(|e| FatbinError(format!("zstd-compressed entry: {e}")))?;
        Ok(out)
    } else if flags & FLAG_LZ4 != 0 {
        crate::lz4::decompress_block(data, dsize as usize)
            .map_err(|e| FatbinError(format!("LZ4-compressed entry: {e}")))
    } else {
        Ok(payload.to_vec())
    }
}

fn ptx_text(bytes: &[u8]) -> Result<String, FatbinError> {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8(bytes[..end].to_vec())
        .map_err(|_| FatbinError("PTX entry is not UTF-8 text".into()))
}

fn ptx_entry(header: &[u8], payload: &[u8], data: Option<&[u8]>) -> Result<PtxEntry, FatbinError> {
    let bytes = match data {
        Some(d) => d.to_vec(),
        None => decompress(header, payload)?,
    };
    Ok(PtxEntry {
        arch: u32_at(header, 28).unwrap_or(0),
        name: entry_name(header),
        text: ptx_text(&bytes)?,
    })
}

fn concat_bundle(header: &[u8], payload: &[u8], out: &mut Contents) -> Result<(), FatbinError> {
    let all = decompress(header, payload)?;
    let count = u32_at(header, 64).unwrap_or(0) as usize;
    for i in 0..count {
        let sub = header
            .get(72 + i * 80..72 + (i + 1) * 80)
            .ok_or_else(|| FatbinError(format!("--concat bundle: sub-entry {i} is truncated")))?;
        let kind = u16_at(sub, 0).unwrap_or(0);
        let off = u32_at(sub, 4).unwrap_or(0) as usize;
        let size = u64_at(sub, 8).unwrap_or(0) as usize;
        let bytes = off
            .checked_add(size)
            .and_then(|end| all.get(off..end))
            .ok_or_else(|| {
                FatbinError(format!(
                    "--concat bundle: sub-entry {i} lies outside the data"
                ))
            })?;
        match kind {
            KIND_PTX => out.ptx.push(ptx_entry(sub, &[], Some(bytes))?),
            KIND_ELF => out.cubins.push(u32_at(sub, 28).unwrap_or(0)),
            _ => {}
        }
    }
    Ok(())
}

/// Reads the fat binary a wrapper points to, from this process's memory.
///
/// # Safety
/// `wrapper` must be what nvcc's host stub passes to `__cudaRegisterFatBinary`: a pointer
/// to a `__fatBinC_Wrapper_t` whose data pointer addresses a complete fat binary.
pub unsafe fn read_wrapper(wrapper: *const u8) -> Result<Contents, FatbinError> {
    if wrapper.is_null() {
        return err("null fat binary");
    }
    // SAFETY: the caller guarantees a wrapper of 24 readable bytes.
    let w = unsafe { std::slice::from_raw_parts(wrapper, 24) };
    let magic = u32_at(w, 0).unwrap_or(0);
    let data = u64_at(w, 8).unwrap_or(0) as usize as *const u8;
    // Some callers (hand-written loaders) pass the fat binary itself.
    let fatbin = if magic == WRAPPER_MAGIC {
        data
    } else if magic == FATBIN_MAGIC {
        wrapper
    } else {
        return err(format!(
            "unknown fat binary wrapper (magic {magic:#010x}, expected {WRAPPER_MAGIC:#010x})"
        ));
    };
    if fatbin.is_null() {
        return err("fat binary wrapper with a null data pointer");
    }
    // SAFETY: the wrapper's data pointer addresses a fat binary header (16 bytes), whose
    // size field covers the rest of it.
    let head: [u8; 16] = unsafe { std::ptr::read_unaligned(fatbin as *const [u8; 16]) };
    let size = fatbin_size(&head)?;
    // SAFETY: as above; `size` comes from the header nvcc wrote.
    let all = unsafe { std::slice::from_raw_parts(fatbin, size as usize) };
    let mut contents = parse(all)?;
    let version = u32_at(w, 4).unwrap_or(0);
    let units = u64_at(w, 16).unwrap_or(0) as usize as *const u8;
    if magic == WRAPPER_MAGIC && version == 2 && contents.ptx.is_empty() && !units.is_null() {
        // SAFETY: a version-2 wrapper is the device-link stub's: its last field points to
        // the NULL-terminated array of the compilation units' fat binaries.
        if let Some(linked) = unsafe { link_units(units) }? {
            contents.ptx.push(linked);
        }
    }
    Ok(contents)
}

/// The PTX of relocatable device code (`nvcc -rdc=true`): the device-link stub registers
/// the linked machine code and passes the units' own fat binaries (each with the unit's
/// PTX when it was compiled for a virtual architecture too, as `fencehound nvcc` builds)
/// as a NULL-terminated array; their PTX is linked into one module
/// ([`fencehound_ptx::link`]). `None` when the array is empty.
///
/// # Safety
/// `list` must point to a NULL-terminated array of pointers to fat binaries.
unsafe fn link_units(list: *const u8) -> Result<Option<PtxEntry>, FatbinError> {
    const MAX_UNITS: usize = 1 << 16;
    let mut units: Vec<(String, String)> = Vec::new();
    let mut arch = u32::MAX;
    for i in 0..MAX_UNITS {
        // SAFETY: within the array, which ends at its NULL entry.
        let p = unsafe { std::ptr::read_unaligned((list as *const u64).add(i)) } as usize;
        if p == 0 {
            break;
        }
        let p = p as *const u8;
        // SAFETY: each entry addresses a fat binary header whose size field covers it.
        let head: [u8; 16] = unsafe { std::ptr::read_unaligned(p as *const [u8; 16]) };
        let size = fatbin_size(&head)?;
        // SAFETY: as above.
        let c = parse(unsafe { std::slice::from_raw_parts(p, size as usize) })?;
        let Some(e) = c.best_ptx() else {
            return err(format!(
                "relocatable device code (-rdc): compilation unit {i} holds no PTX, only \
                 machine code; build with `fencehound nvcc`, or add \
                 `-gencode arch=compute_80,code=compute_80` to each unit"
            ));
        };
        arch = arch.min(e.arch);
        let name = if e.name.is_empty() {
            format!("unit{i}")
        } else {
            e.name.clone()
        };
        units.push((name, e.text.clone()));
    }
    if units.is_empty() {
        return Ok(None);
    }
    let text = fencehound_ptx::link(&units).map_err(|e| {
        FatbinError(format!(
            "linking the PTX of {} relocatable compilation units: {e}",
            units.len()
        ))
    })?;
    let name = units
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join("+");
    Ok(Some(PtxEntry { arch, name, text }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a fat binary with one uncompressed PTX entry, the layout described above.
    fn fatbin_with(entries: &[(u16, u32, &[u8], u64, u64)]) -> Vec<u8> {
        let mut body = Vec::new();
        for (kind, arch, payload, flags, dsize) in entries {
            let mut h = vec![0u8; 80];
            h[0..2].copy_from_slice(&kind.to_le_bytes());
            h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
            h[4..8].copy_from_slice(&80u32.to_le_bytes());
            h[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
            h[16..20].copy_from_slice(&(payload.len() as u32).to_le_bytes());
            h[28..32].copy_from_slice(&arch.to_le_bytes());
            h[32..36].copy_from_slice(&64u32.to_le_bytes());
            h[36..40].copy_from_slice(&4u32.to_le_bytes());
            h[40..48].copy_from_slice(&flags.to_le_bytes());
            h[56..64].copy_from_slice(&dsize.to_le_bytes());
            h[64..68].copy_from_slice(b"a.cu");
            body.extend_from_slice(&h);
            body.extend_from_slice(payload);
        }
        let mut out = Vec::new();
        out.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&16u16.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    #[test]
    fn plain_ptx_and_cubin_entries() {
        let ptx = b".version 9.5\n.target sm_80\n\0\0\0";
        let f = fatbin_with(&[
            (KIND_ELF, 75, b"\x7fELF....", 0, 0),
            (KIND_PTX, 75, ptx, 0, 0),
            (KIND_PTX, 90, b".target sm_90\n", 0, 0),
        ]);
        let c = parse(&f).unwrap();
        assert_eq!(c.cubins, vec![75]);
        assert_eq!(c.ptx.len(), 2);
        assert_eq!(c.ptx[0].text, ".version 9.5\n.target sm_80\n");
        assert_eq!(c.ptx[0].name, "a.cu");
        assert_eq!(c.best_ptx().map(|e| e.arch), Some(90));
    }

    #[test]
    fn lz4_entries_decompress() {
        // LZ4 block: 4 literals "abcd", then a match of offset 4, length 4+4 → "abcdabcdabcd",
        // then the last 5 literals (LZ4 blocks end with literals).
        let block = [
            0x44, b'a', b'b', b'c', b'd', 4, 0, 0x50, b'.', b'.', b'.', b'.', b'\n',
        ];
        let f = fatbin_with(&[(KIND_PTX, 80, &block, FLAG_LZ4, 17)]);
        let c = parse(&f).unwrap();
        assert_eq!(c.ptx[0].text, "abcdabcdabcd....\n");
    }

    #[test]
    fn damaged_input_is_an_error_not_a_panic() {
        let f = fatbin_with(&[(KIND_PTX, 80, b"x", 0, 0)]);
        for cut in 0..f.len() {
            let _ = parse(&f[..cut]);
        }
        let mut bad = f.clone();
        bad[0] = 0;
        assert!(parse(&bad).is_err());
        let z = fatbin_with(&[(KIND_PTX, 80, b"\x28\xb5\x2f\xfd garbage", FLAG_ZSTD, 100)]);
        assert!(parse(&z).is_err());
        let huge = fatbin_with(&[(KIND_PTX, 80, b"x", FLAG_LZ4, u64::MAX)]);
        assert!(parse(&huge).is_err());
    }
}
