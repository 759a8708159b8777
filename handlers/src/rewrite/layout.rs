//! The host side of the device buffers: what memory the runtime needs, how the control
//! block is laid out, and reading the statistics back. The layout mirrors the structs of
//! `runtime.cu` (`FhCtl`, `FhThread`, `FhEntry`, `FhOverlay`); the differential test checks
//! both sides agree, since every statistic it compares comes through here.
//!
//! Any device with byte-addressed memory can host the buffers: [`DeviceMemory`] is
//! implemented for the vgpu here and for CUDA by the fuzzer's GPU backend.

use crate::buffers::{BufferConfig, DrainPolicy};
use crate::model::Model;
use crate::stats::{BufferStats, DrainReason};

/// Bytes of the control block (`FhCtl`, 80 bytes, then the words only the rewrite's
/// inlined code reads: see [`control_bytes`]).
pub const CTL_BYTES: u64 = 160;
/// Bytes of a thread header (`FhThread`); the entries follow it.
pub const THREAD_HEADER: u64 = 176;
/// Bytes of one buffered entry (`FhEntry`: packed address/size/space/semantics, value).
pub const ENTRY_BYTES: u64 = 16;
/// Bytes of a CTA header (`FhCta`: lock, overlay length, orphan length).
pub const OVERLAY_HEADER: u64 = 16;
/// Drain-reason counters before the flush-length histograms.
const REASONS: u64 = 16;

const FLAG_ACTIVE: u32 = 1;
const FLAG_GLOBAL: u32 = 2;
const FLAG_SHARED: u32 = 4;
pub(crate) const FLAG_SCOPED: u32 = 8;

/// Defaults of the device policy (see [`DrainPolicy::Device`]).
pub const DEFAULT_LIVENESS_PERIOD: u32 = 1024;
pub const DEFAULT_OVERLAY_CAPACITY: u32 = 4096;

/// Byte access to a device's memory.
pub trait DeviceMemory {
    type Error: std::fmt::Display;
    /// Allocates `bytes` of zeroed memory; returns its (global) address.
    fn alloc_zeroed(&mut self, bytes: u64, name: &str) -> Result<u64, Self::Error>;
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), Self::Error>;
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Self::Error>;
}

impl DeviceMemory for fencehound_vgpu::Device {
    type Error = fencehound_vgpu::DeviceError;
    fn alloc_zeroed(&mut self, bytes: u64, name: &str) -> Result<u64, Self::Error> {
        // vgpu allocations start zeroed.
        self.alloc_named(bytes.max(1), name)
    }
    fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), Self::Error> {
        self.copy_to(addr, data)
    }
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Self::Error> {
        self.copy_from(addr, buf)
    }
}

/// Why the buffers cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    #[error("the `{0}` model has no device-side implementation (it needs per-location store histories on the device); it runs on the vgpu only")]
    NoDeviceModel(&'static str),
    #[error("the device policy is required (DrainPolicy::Device)")]
    NotDevicePolicy,
    #[error("{what} needs {bytes} bytes of device memory, more than the {limit} allowed")]
    TooLarge {
        what: &'static str,
        bytes: u64,
        limit: u64,
    },
    #[error("a launch of {threads} threads in {ctas} CTAs does not fit the buffers, made for {} threads in {} CTAs", sizes.threads, sizes.ctas)]
    LaunchTooLarge {
        threads: u64,
        ctas: u64,
        sizes: Sizes,
    },
    #[error("device memory: {0}")]
    Device(String),
}

/// The shape of a launch (grid and CTA, in threads per dimension): the control block
/// carries what the inlined set-up derives from it (see [`control_bytes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchShape {
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

impl LaunchShape {
    pub fn new(grid: [u32; 3], block: [u32; 3]) -> LaunchShape {
        LaunchShape { grid, block }
    }

    /// The shape of a vgpu launch.
    pub fn of(grid: fencehound_vgpu::Dim3, block: fencehound_vgpu::Dim3) -> LaunchShape {
        LaunchShape::new([grid.x, grid.y, grid.z], [block.x, block.y, block.z])
    }

    /// CTAs of the launch.
    pub fn ctas(&self) -> u64 {
        self.grid.iter().map(|&d| d as u64).product()
    }

    /// Threads per CTA.
    pub fn cta_threads(&self) -> u64 {
        self.block.iter().map(|&d| d as u64).product()
    }

    /// Threads of the launch.
    pub fn threads(&self) -> u64 {
        self.ctas() * self.cta_threads()
    }

    /// Whether the grid and the CTA have one dimension (the inlined set-up then reads
    /// `%tid.x` and `%ctaid.x` alone).
    pub fn flat(&self) -> bool {
        self.grid[1] == 1 && self.grid[2] == 1 && self.block[1] == 1 && self.block[2] == 1
    }
}

/// What the buffers need to know that [`BufferConfig`] does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sizes {
    /// Most threads of any launch.
    pub threads: u32,
    /// Most CTAs of any launch.
    pub ctas: u32,
}

/// The device memory of one execution's buffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Area {
    pub ctl: u64,
    pub threads: u64,
    pub overlays: u64,
    pub counters: u64,
    pub sizes: Sizes,
    pub capacity: u32,
    pub overlay_capacity: u32,
    pub liveness_period: u32,
    /// Every allocation: (address, bytes).
    pub allocations: Vec<(u64, u64)>,
}

/// Largest buffer area we allocate (a typo in a grid size must not exhaust memory).
pub const MAX_AREA_BYTES: u64 = 8 << 30;

/// Whether the runtime implements `model` (everything but load-side models).
pub fn has_device_model(model: Model) -> bool {
    matches!(model, Model::Sc | Model::Bugaroo | Model::Scoped)
}

/// Bytes per thread: header plus `2 × capacity` entries (both spaces share one queue).
pub fn thread_bytes(capacity: u32) -> u64 {
    THREAD_HEADER + 2 * capacity as u64 * ENTRY_BYTES
}

/// Bytes per CTA: header, overlay entries, orphan entries (exited threads' entries).
pub fn overlay_bytes(overlay_capacity: u32) -> u64 {
    OVERLAY_HEADER + 2 * overlay_capacity as u64 * ENTRY_BYTES
}

/// Bins of a flush-length histogram: one per length up to the longest flush (a thread's
/// space holds `capacity` entries, a CTA's orphan queue `overlay_capacity`).
fn bins(capacity: u32, overlay_capacity: u32) -> u64 {
    capacity.max(overlay_capacity) as u64 + 1
}

fn counter_words(capacity: u32, overlay_capacity: u32) -> u64 {
    REASONS + 2 * bins(capacity, overlay_capacity)
}

/// Total device memory the buffers of `sizes` take.
pub fn area_bytes(cfg: &BufferConfig, sizes: Sizes) -> u64 {
    let ov = match cfg.policy {
        DrainPolicy::Device {
            overlay_capacity, ..
        } => overlay_capacity,
        DrainPolicy::Native => DEFAULT_OVERLAY_CAPACITY,
    };
    CTL_BYTES
        + sizes.threads as u64 * thread_bytes(cfg.capacity)
        + sizes.ctas as u64 * overlay_bytes(ov)
        + counter_words(cfg.capacity, ov) * 8
}

/// Allocates (zeroed) the buffers for launches of at most `sizes`.
pub fn allocate<D: DeviceMemory>(
    dev: &mut D,
    cfg: &BufferConfig,
    sizes: Sizes,
) -> Result<Area, LayoutError> {
    if !has_device_model(cfg.model) {
        return Err(LayoutError::NoDeviceModel(cfg.model.name()));
    }
    let DrainPolicy::Device {
        liveness_period,
        overlay_capacity,
    } = cfg.policy
    else {
        return Err(LayoutError::NotDevicePolicy);
    };
    let total = area_bytes(cfg, sizes);
    if total > MAX_AREA_BYTES {
        return Err(LayoutError::TooLarge {
            what: "the write buffers",
            bytes: total,
            limit: MAX_AREA_BYTES,
        });
    }
    let dev_err = |e: D::Error| LayoutError::Device(e.to_string());
    let mut allocations = Vec::new();
    let mut alloc = |dev: &mut D, bytes: u64, name: &str| -> Result<u64, LayoutError> {
        let a = dev.alloc_zeroed(bytes, name).map_err(dev_err)?;
        allocations.push((a, bytes));
        Ok(a)
    };
    let ctl = alloc(dev, CTL_BYTES, "fencehound control block")?;
    let threads = alloc(
        dev,
        sizes.threads.max(1) as u64 * thread_bytes(cfg.capacity),
        "fencehound thread buffers",
    )?;
    let overlays = alloc(
        dev,
        sizes.ctas.max(1) as u64 * overlay_bytes(overlay_capacity),
        "fencehound CTA overlays",
    )?;
    let counters = alloc(
        dev,
        counter_words(cfg.capacity, overlay_capacity) * 8,
        "fencehound counters",
    )?;
    Ok(Area {
        ctl,
        threads,
        overlays,
        counters,
        sizes,
        capacity: cfg.capacity,
        overlay_capacity,
        liveness_period,
        allocations,
    })
}

/// The control block for launch number `launch` (`active`: whether this launch buffers:
/// a kernel outside `cfg.kernels` or model `sc` does not).
pub fn control_bytes(
    cfg: &BufferConfig,
    area: &Area,
    launch: u32,
    shape: LaunchShape,
    active: bool,
) -> Vec<u8> {
    let mut flags = 0;
    if active && matches!(cfg.model, Model::Bugaroo | Model::Scoped) {
        flags |= FLAG_ACTIVE;
    }
    if cfg.buffer_global {
        flags |= FLAG_GLOBAL;
    }
    if cfg.buffer_shared {
        flags |= FLAG_SHARED;
    }
    if cfg.model == Model::Scoped {
        flags |= FLAG_SCOPED;
    }
    let mut b = Vec::with_capacity(CTL_BYTES as usize);
    // The selection hash's launch part (the runtime's `key`), not the seed: a thread's
    // header then costs one `mix` instead of three.
    b.extend_from_slice(&crate::select::launch_key(cfg.seed, launch).to_le_bytes());
    b.extend_from_slice(&crate::select::threshold(cfg.p_w).to_le_bytes());
    b.extend_from_slice(&launch.to_le_bytes());
    b.extend_from_slice(&flags.to_le_bytes());
    b.extend_from_slice(&area.capacity.to_le_bytes());
    b.extend_from_slice(&area.liveness_period.to_le_bytes());
    b.extend_from_slice(&area.overlay_capacity.to_le_bytes());
    b.extend_from_slice(&area.sizes.threads.to_le_bytes());
    b.extend_from_slice(&area.threads.to_le_bytes());
    b.extend_from_slice(&area.overlays.to_le_bytes());
    b.extend_from_slice(&area.counters.to_le_bytes());
    // Threads exited so far in this launch; the launch's mode for the rewrite's fast path.
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&launch_mode(cfg, flags).to_le_bytes());
    // Live threads holding entries (counted by the runtime); padding.
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    // After runtime.cu's `FhCtl` (which the runtime never reads past), the constants the
    // rewrite's inlined code compares against, so that a thread's set-up loads them
    // instead of deriving them (`emit::inline_begin`): per space the selection threshold
    // when the space is buffered, else 0 (offset 80, 88); the liveness period - 1 (u32
    // wrap: 0 becomes 0xffffffff) (96); the flush histograms' bins (`fh_bins`) (100);
    // then what the launch's shape gives, so that a thread's set-up does not derive it:
    // 1 when the grid and the CTA are one-dimensional (104), the threads per CTA (108),
    // the launch's threads (112), the bytes per thread (header and entries) (116) and
    // per CTA area (120); 1 when some space's threshold needs the selection hash — neither
    // 0 (never selected) nor `ALWAYS` (every store) (124); the header's tag for this launch
    // (`launch + 1`) (128), 1 under `scoped` (132), the capacity per space (136), the
    // launch's threads - 1 (the number of exits the last thread to exit finds) (140); the
    // counters' address again and the shared flush histogram's (the counters + 8 x bins),
    // which an inlined drain reads to record a flush (144, 152).
    let thr = crate::select::threshold(cfg.p_w);
    let per_space = |on: bool| if on { thr } else { 0 };
    b.extend_from_slice(&per_space(cfg.buffer_global).to_le_bytes());
    b.extend_from_slice(&per_space(cfg.buffer_shared).to_le_bytes());
    b.extend_from_slice(&area.liveness_period.wrapping_sub(1).to_le_bytes());
    b.extend_from_slice(&(area.capacity.max(area.overlay_capacity) + 1).to_le_bytes());
    b.extend_from_slice(&u32::from(shape.flat()).to_le_bytes());
    // (As the runtime's `u32` products: `begin_launch` refuses a launch whose threads do
    // not fit the buffers, so these do not wrap for a launch that runs.)
    b.extend_from_slice(&(shape.cta_threads() as u32).to_le_bytes());
    b.extend_from_slice(&(shape.threads() as u32).to_le_bytes());
    let stride = |bytes: u64| u32::try_from(bytes).unwrap_or(u32::MAX);
    b.extend_from_slice(&stride(thread_bytes(area.capacity)).to_le_bytes());
    b.extend_from_slice(&stride(overlay_bytes(area.overlay_capacity)).to_le_bytes());
    let hashes = [cfg.buffer_global, cfg.buffer_shared]
        .iter()
        .any(|&on| on && thr != 0 && thr < ALWAYS);
    b.extend_from_slice(&u32::from(hashes).to_le_bytes());
    b.extend_from_slice(&launch.wrapping_add(1).to_le_bytes());
    b.extend_from_slice(&u32::from(flags & FLAG_SCOPED != 0).to_le_bytes());
    b.extend_from_slice(&area.capacity.to_le_bytes());
    b.extend_from_slice(&(shape.threads() as u32).wrapping_sub(1).to_le_bytes());
    let bins = u64::from(area.capacity.max(area.overlay_capacity)) + 1;
    b.extend_from_slice(&area.counters.to_le_bytes());
    b.extend_from_slice(&(area.counters + 8 * bins).to_le_bytes());
    debug_assert_eq!(b.len() as u64, CTL_BYTES);
    b
}

/// The mode bytes of the control block (offset 68), which a fast kernel of the rewrite
/// reads once at entry: byte 0 for a module without `.cta` atomics on global memory, byte
/// 1 for one with them (see `emit::mode_code`); each is 0 (the launch does not buffer),
/// [`MODE_FULL`] or [`MODE_QUIET`]. A launch is quiet when it buffers but its selection
/// function never selects (`p_w = 0`, or no space buffered) and nothing else can put an
/// entry anywhere (under `scoped`, a `.cta` atomic uses the CTA overlay at any `p_w`);
/// full when it buffers otherwise.
fn launch_mode(cfg: &BufferConfig, flags: u32) -> u32 {
    if flags & FLAG_ACTIVE == 0 {
        return 0;
    }
    let never = crate::select::threshold(cfg.p_w) == 0 || flags & (FLAG_GLOBAL | FLAG_SHARED) == 0;
    let plain = if never { MODE_QUIET } else { MODE_FULL };
    let cta = if never && flags & FLAG_SCOPED == 0 {
        MODE_QUIET
    } else {
        MODE_FULL
    };
    plain | cta << 8
}

/// Values of a mode byte.
pub(crate) const MODE_FULL: u32 = 1;
pub(crate) const MODE_QUIET: u32 = 2;
/// Offset of the mode bytes in the control block.
pub(crate) const CTL_MODE: u32 = 68;

/// `select::threshold(1.0)`: every store selected, no hash needed.
const ALWAYS: u64 = 1 << 53;

/// Writes the control block before a launch of shape `shape`, which must fit the sizes
/// the buffers were made for (the inlined set-up does not check: a thread's header would
/// lie past the buffers).
pub fn begin_launch<D: DeviceMemory>(
    dev: &mut D,
    cfg: &BufferConfig,
    area: &Area,
    launch: u32,
    shape: LaunchShape,
    active: bool,
) -> Result<(), LayoutError> {
    let (ctas, threads) = (shape.ctas(), shape.threads());
    if threads > area.sizes.threads as u64 || ctas > area.sizes.ctas as u64 {
        return Err(LayoutError::LaunchTooLarge {
            threads,
            ctas,
            sizes: area.sizes,
        });
    }
    dev.write(area.ctl, &control_bytes(cfg, area, launch, shape, active))
        .map_err(|e| LayoutError::Device(e.to_string()))
}

/// Whether launch of `kernel` buffers under `cfg` (the native `StoreBuffers::launch_begin`).
pub fn launch_active(cfg: &BufferConfig, kernel: &str) -> bool {
    matches!(cfg.model, Model::Bugaroo | Model::Scoped)
        && cfg.kernels.as_ref().is_none_or(|k| k.contains(kernel))
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    b.get(o..o + 4)
        .map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    b.get(o..o + 8).map_or(0, |s| {
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        u64::from_le_bytes(a)
    })
}

const REASON_ORDER: [DrainReason; 12] = [
    DrainReason::Fence,
    DrainReason::Release,
    DrainReason::Barrier,
    DrainReason::WarpSync,
    DrainReason::Atomic,
    DrainReason::WriteAfterWrite,
    DrainReason::PartialOverlap,
    DrainReason::Full,
    DrainReason::ThreadExit,
    DrainReason::KernelExit,
    DrainReason::Coherence,
    DrainReason::Liveness,
];

/// Entries still buffered (threads and overlays): zero after every completed launch.
pub fn buffered<D: DeviceMemory>(dev: &D, area: &Area) -> Result<u64, LayoutError> {
    let err = |e: D::Error| LayoutError::Device(e.to_string());
    let mut n = 0u64;
    let stride = thread_bytes(area.capacity);
    let mut h = vec![0u8; 8];
    for t in 0..area.sizes.threads as u64 {
        dev.read(area.threads + t * stride, &mut h).map_err(err)?;
        n += u32_at(&h, 4) as u64;
    }
    let ostride = overlay_bytes(area.overlay_capacity);
    let mut c16 = vec![0u8; 16];
    for c in 0..area.sizes.ctas as u64 {
        dev.read(area.overlays + c * ostride, &mut c16)
            .map_err(err)?;
        n += u32_at(&c16, 4) as u64 + u32_at(&c16, 8) as u64;
    }
    Ok(n)
}

/// The statistics the runtime kept, in the native [`BufferStats`] form.
pub fn read_stats<D: DeviceMemory>(dev: &D, area: &Area) -> Result<BufferStats, LayoutError> {
    let err = |e: D::Error| LayoutError::Device(e.to_string());
    let mut s = BufferStats::default();
    let stride = thread_bytes(area.capacity);
    let mut h = vec![0u8; THREAD_HEADER as usize];
    for t in 0..area.sizes.threads as u64 {
        dev.read(area.threads + t * stride, &mut h).map_err(err)?;
        s.global.stores_seen += u64_at(&h, 64);
        s.shared.stores_seen += u64_at(&h, 72);
        s.global.stores_buffered += u64_at(&h, 80);
        s.shared.stores_buffered += u64_at(&h, 88);
        s.forwarded_loads += u64_at(&h, 96);
        s.overlay_loads += u64_at(&h, 104);
        s.peak_occupancy = s.peak_occupancy.max(u32_at(&h, 112));
        // Stores the inlined code pushed: each was seen and buffered (runtime.cu, `pushed`).
        let (pg, ps) = (u64_at(&h, 160), u64_at(&h, 168));
        s.global.stores_seen += pg;
        s.shared.stores_seen += ps;
        s.global.stores_buffered += pg;
        s.shared.stores_buffered += ps;
    }
    let words = counter_words(area.capacity, area.overlay_capacity) as usize;
    let mut c = vec![0u8; words * 8];
    dev.read(area.counters, &mut c).map_err(err)?;
    let word = |i: usize| u64_at(&c, i * 8);
    // Stores that quiet launches saw (the rewrite counts them in registers; see
    // `emit::SEEN_GLOBAL`).
    s.global.stores_seen += word(super::emit::SEEN_GLOBAL as usize);
    s.shared.stores_seen += word(super::emit::SEEN_SHARED as usize);
    for (i, r) in REASON_ORDER.iter().enumerate() {
        let n = word(i);
        if n > 0 {
            s.drains.insert(*r, n);
        }
    }
    let bins = bins(area.capacity, area.overlay_capacity) as usize;
    for n in 1..bins {
        let g = word(REASONS as usize + n);
        if g > 0 {
            s.global.flush_lengths.insert(n as u32, g);
        }
        let sh = word(REASONS as usize + bins + n);
        if sh > 0 {
            s.shared.flush_lengths.insert(n as u32, sh);
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_per_65536_threads_at_capacity_256() {
        // 176-byte header + 2 × 256 × 16-byte entries per thread.
        assert_eq!(thread_bytes(256), 8368);
        assert_eq!(65_536 * thread_bytes(256), 548_405_248);
    }

    #[test]
    fn a_launch_larger_than_the_buffers_is_refused() {
        // The inlined set-up trusts the host: a launch with more threads or CTAs than the
        // buffers hold never starts.
        let mut dev = fencehound_vgpu::Device::new();
        let mut cfg = BufferConfig::new(Model::Bugaroo, 1.0, 7);
        cfg.policy = DrainPolicy::Device {
            liveness_period: 8,
            overlay_capacity: 16,
        };
        let sizes = Sizes {
            threads: 256,
            ctas: 4,
        };
        let area = allocate(&mut dev, &cfg, sizes).unwrap();
        let fits = LaunchShape::new([4, 1, 1], [64, 1, 1]);
        assert!(begin_launch(&mut dev, &cfg, &area, 0, fits, true).is_ok());
        for shape in [
            LaunchShape::new([4, 1, 1], [65, 1, 1]),
            LaunchShape::new([5, 1, 1], [8, 1, 1]),
            LaunchShape::new([2, 2, 2], [1, 1, 1]),
            LaunchShape::new([65_536, 65_536, 1], [1, 1, 1]),
        ] {
            let e = begin_launch(&mut dev, &cfg, &area, 0, shape, true).unwrap_err();
            assert!(
                matches!(e, LayoutError::LaunchTooLarge { .. }),
                "{shape:?}: {e}"
            );
        }
    }

    #[test]
    fn control_block_is_144_bytes() {
        let cfg = BufferConfig::new(Model::Scoped, 0.5, 7);
        let area = Area {
            ctl: 0,
            threads: 1,
            overlays: 2,
            counters: 3,
            sizes: Sizes {
                threads: 4,
                ctas: 1,
            },
            capacity: 256,
            overlay_capacity: 16,
            liveness_period: 8,
            allocations: Vec::new(),
        };
        let shape = LaunchShape::new([3, 2, 1], [32, 1, 1]);
        let b = control_bytes(&cfg, &area, 2, shape, true);
        assert_eq!(b.len(), 160);
        assert_eq!(u32_at(&b, 16), 2);
        // The live-holder count starts at 0 each launch.
        assert_eq!(u32_at(&b, 72), 0);
        assert_eq!(
            u32_at(&b, 20),
            FLAG_ACTIVE | FLAG_GLOBAL | FLAG_SHARED | FLAG_SCOPED
        );
        assert_eq!(u64_at(&b, 56), 3);
        // The inlined code's constants: thresholds per space, liveness - 1, bins.
        assert_eq!(u64_at(&b, 80), crate::select::threshold(0.5));
        assert_eq!(u64_at(&b, 88), crate::select::threshold(0.5));
        assert_eq!(u32_at(&b, 96), 7);
        assert_eq!(u32_at(&b, 100), 257);
        // The launch's shape: not flat (grid y = 2), 32 threads per CTA, 192 in all, the
        // strides of a thread's buffers and of a CTA's area; p_w = 0.5 hashes.
        assert_eq!(u32_at(&b, 104), 0);
        assert_eq!(u32_at(&b, 108), 32);
        assert_eq!(u32_at(&b, 112), 192);
        assert_eq!(u32_at(&b, 116) as u64, thread_bytes(256));
        assert_eq!(u32_at(&b, 120) as u64, overlay_bytes(16));
        assert_eq!(u32_at(&b, 124), 1);
        // The header's tag, the scoped flag, the capacity.
        assert_eq!(u32_at(&b, 128), 3);
        assert_eq!(u32_at(&b, 132), 1);
        assert_eq!(u32_at(&b, 136), 256);
        assert_eq!(u32_at(&b, 140), 191);
        // The counters and the shared flush histogram: 257 bins after the global one.
        assert_eq!(u64_at(&b, 144), 3);
        assert_eq!(u64_at(&b, 152), 3 + 8 * 257);
        let flat = LaunchShape::new([5, 1, 1], [64, 1, 1]);
        let mut only_shared = cfg.clone();
        only_shared.buffer_global = false;
        let b = control_bytes(&only_shared, &area, 2, flat, true);
        assert_eq!(u64_at(&b, 80), 0);
        assert_eq!(u32_at(&b, 104), 1);
        assert_eq!(u32_at(&b, 112), 320);
        assert_eq!(u32_at(&b, 124), 1);
        let mut never = cfg;
        never.p_w = 1.0;
        let area = Area {
            liveness_period: 0,
            ..area
        };
        let b = control_bytes(&never, &area, 2, flat, true);
        assert_eq!(u64_at(&b, 88), 1 << 53);
        assert_eq!(u32_at(&b, 96), u32::MAX);
        // Every store selected: no hash.
        assert_eq!(u32_at(&b, 124), 0);
        let mut none = never.clone();
        none.p_w = 0.0;
        assert_eq!(u32_at(&control_bytes(&none, &area, 2, flat, true), 124), 0);
    }
}
