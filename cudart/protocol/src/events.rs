//! The event log of one program execution: every global/shared access, fence and barrier
//! of the launches of one module, in the order the hooks saw them, so that the runner can
//! show them to an observer (the minimizer's audit asks which fences ran and what they
//! order) as it would for a kernel campaign run in its own process.
//!
//! The runtime writes fixed 48-byte little-endian records ([`write_event`]); a launch
//! record is followed by its kernel name, and every launch's events end with an end
//! record (written, and the log flushed, when the launch returns). A log longer than
//! [`MAX_BYTES`] ends with a truncation record. A reader that meets one, a torn record,
//! or a launch without its end (a program killed or crashed mid-launch) must treat the
//! observation as incomplete: what it did not see could have been anything.

use fencehound_vgpu::hooks::{
    Access, AccessKind, Barrier, BarrierKind, Fence, FenceKind, LaunchInfo, Scope, Sem, ThreadRef,
};
use fencehound_vgpu::{Location, Observer};
use std::io::{self, Write};

/// The most a log may hold; 256 MiB is about 5.6 M events.
pub const MAX_BYTES: u64 = 256 << 20;

const RECORD: usize = 48;
const LAUNCH: u8 = 0;
const ACCESS: u8 = 1;
const FENCE: u8 = 2;
const BARRIER: u8 = 3;
const FENCE_DRAINS: u8 = 4;
const LAUNCH_END: u8 = 5;
const TRUNCATED: u8 = 255;

/// One logged event, owned.
#[derive(Debug, Clone)]
pub enum Event {
    Launch {
        launch: u32,
        kernel: String,
        threads: u32,
        ctas: u32,
        threads_per_cta: u32,
    },
    Access(Access),
    Fence(Fence),
    Barrier(Barrier),
    /// The events of the launch begun last are complete.
    LaunchEnd,
    /// Buffered stores the fence at `site` drained in the launch just ended.
    FenceDrains {
        site: u32,
        count: u64,
    },
}

impl Event {
    /// The launch record's view, for `Observer::launch_begin`.
    pub fn launch_info(&self) -> Option<LaunchInfo<'_>> {
        match self {
            Event::Launch {
                launch,
                kernel,
                threads,
                ctas,
                threads_per_cta,
            } => Some(LaunchInfo {
                launch: *launch,
                kernel,
                threads: *threads,
                ctas: *ctas,
                threads_per_cta: *threads_per_cta,
            }),
            _ => None,
        }
    }
}

/// What reading a log found.
#[derive(Debug, Clone, Default)]
pub struct Log {
    pub events: Vec<Event>,
    /// Why the log does not hold every event (`None`: it does).
    pub incomplete: Option<String>,
}

/// Writes events to `w`, stopping (with a truncation record) at [`MAX_BYTES`].
pub struct Writer<W: Write> {
    w: W,
    written: u64,
    limit: u64,
    truncated: bool,
    /// A launch record was written and its end record not yet.
    open: bool,
    /// The first write error; later events are dropped and the log ends torn.
    pub error: Option<io::Error>,
}

impl<W: Write> Writer<W> {
    pub fn new(w: W) -> Self {
        Self::with_limit(w, MAX_BYTES)
    }

    pub fn with_limit(w: W, limit: u64) -> Self {
        Writer {
            w,
            written: 0,
            limit,
            truncated: false,
            open: false,
            error: None,
        }
    }

    fn put(&mut self, rec: &[u8; RECORD], tail: &[u8]) {
        if self.truncated || self.error.is_some() {
            return;
        }
        let len = (RECORD + tail.len()) as u64;
        if self.written + len + RECORD as u64 > self.limit {
            self.truncated = true;
            let mut t = [0u8; RECORD];
            t[0] = TRUNCATED;
            if let Err(e) = self.w.write_all(&t) {
                self.error = Some(e);
            }
            return;
        }
        let r = self.w.write_all(rec).and_then(|_| self.w.write_all(tail));
        match r {
            Ok(()) => self.written += len,
            Err(e) => self.error = Some(e),
        }
    }

    pub fn launch(&mut self, info: &LaunchInfo<'_>) {
        let mut r = [0u8; RECORD];
        r[0] = LAUNCH;
        put32(&mut r, 4, info.launch);
        put32(&mut r, 8, info.threads);
        put32(&mut r, 12, info.ctas);
        put32(&mut r, 16, info.threads_per_cta);
        let name = info.kernel.as_bytes();
        put32(&mut r, 20, name.len() as u32);
        self.put(&r, name);
        self.open = true;
    }

    /// Ends the launch begun by the last [`Writer::launch`] (nothing if none is open) and
    /// flushes.
    pub fn end_launch(&mut self) {
        if std::mem::take(&mut self.open) {
            let mut r = [0u8; RECORD];
            r[0] = LAUNCH_END;
            self.put(&r, &[]);
        }
        self.flush();
    }

    pub fn access(&mut self, a: &Access) {
        let mut r = [0u8; RECORD];
        r[0] = ACCESS;
        r[1] = match a.kind {
            AccessKind::Load => 0,
            AccessKind::Store => 1,
            AccessKind::Atomic => 2,
        };
        r[2] = a.sem.code();
        r[3] = a.scope.code();
        put32(&mut r, 4, a.size);
        thread(&mut r, &a.thread);
        put32(&mut r, 28, a.site);
        put32(&mut r, 32, a.launch);
        r[37] = a.indivisible as u8;
        r[38] = a.newest as u8;
        match a.loc {
            Location::Global(addr) => r[40..48].copy_from_slice(&addr.to_le_bytes()),
            Location::Shared { cta, offset } => {
                r[36] = 1;
                put32(&mut r, 40, cta);
                put32(&mut r, 44, offset);
            }
        }
        self.put(&r, &[]);
    }

    pub fn fence(&mut self, f: &Fence) {
        let mut r = [0u8; RECORD];
        r[0] = FENCE;
        r[1] = match f.kind {
            FenceKind::Sc => 0,
            FenceKind::AcqRel => 1,
            FenceKind::Acquire => 2,
            FenceKind::Release => 3,
        };
        r[3] = f.scope.code();
        thread(&mut r, &f.thread);
        put32(&mut r, 28, f.site);
        self.put(&r, &[]);
    }

    pub fn barrier(&mut self, b: &Barrier) {
        let mut r = [0u8; RECORD];
        r[0] = BARRIER;
        r[1] = match b.kind {
            BarrierKind::Sync => 0,
            BarrierKind::Arrive => 1,
            BarrierKind::Warp => 2,
        };
        put32(&mut r, 4, b.id);
        thread(&mut r, &b.thread);
        put32(&mut r, 28, b.site);
        self.put(&r, &[]);
    }

    pub fn fence_drains(&mut self, site: u32, count: u64) {
        let mut r = [0u8; RECORD];
        r[0] = FENCE_DRAINS;
        put32(&mut r, 28, site);
        r[40..48].copy_from_slice(&count.to_le_bytes());
        self.put(&r, &[]);
    }

    pub fn flush(&mut self) {
        if let Err(e) = self.w.flush() {
            self.error.get_or_insert(e);
        }
    }

    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

impl<W: Write> Observer for Writer<W> {
    fn launch_begin(&mut self, info: &LaunchInfo<'_>) {
        self.launch(info)
    }
    fn access(&mut self, a: &Access) {
        Writer::access(self, a)
    }
    fn fence(&mut self, f: &Fence) {
        Writer::fence(self, f)
    }
    fn barrier(&mut self, b: &Barrier) {
        Writer::barrier(self, b)
    }
}

/// Shows a log's events to an observer; fence drains are added to `drains` (by site).
pub fn replay(
    log: &Log,
    obs: &mut dyn Observer,
    drains: &mut std::collections::BTreeMap<u32, u64>,
) {
    for e in &log.events {
        match e {
            Event::Launch { .. } => {
                if let Some(info) = e.launch_info() {
                    obs.launch_begin(&info)
                }
            }
            Event::Access(a) => obs.access(a),
            Event::Fence(f) => obs.fence(f),
            Event::Barrier(b) => obs.barrier(b),
            Event::LaunchEnd => {}
            Event::FenceDrains { site, count } => *drains.entry(*site).or_default() += count,
        }
    }
}

fn put32(r: &mut [u8; RECORD], at: usize, v: u32) {
    r[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get32(r: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([r[at], r[at + 1], r[at + 2], r[at + 3]])
}

fn get64(r: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&r[at..at + 8]);
    u64::from_le_bytes(b)
}

fn thread(r: &mut [u8; RECORD], t: &ThreadRef) {
    put32(r, 8, t.cta);
    put32(r, 12, t.tid);
    put32(r, 16, t.global);
    put32(r, 20, t.lane);
    put32(r, 24, t.warp);
}

fn thread_of(r: &[u8]) -> ThreadRef {
    ThreadRef {
        cta: get32(r, 8),
        tid: get32(r, 12),
        global: get32(r, 16),
        lane: get32(r, 20),
        warp: get32(r, 24),
    }
}

/// Reads a log. Never fails: what it cannot read makes the log incomplete.
pub fn read(bytes: &[u8]) -> Log {
    let mut log = Log::default();
    let mut at = 0;
    let mut open = false;
    let bad = |log: &mut Log, why: &str| {
        log.incomplete = Some(why.to_string());
    };
    while at < bytes.len() {
        let Some(r) = bytes.get(at..at + RECORD) else {
            bad(&mut log, "the event log ends in a torn record");
            break;
        };
        at += RECORD;
        let ev = match r[0] {
            LAUNCH => {
                let n = get32(r, 20) as usize;
                let Some(name) = bytes.get(at..at + n) else {
                    bad(&mut log, "the event log ends in a torn record");
                    break;
                };
                at += n;
                open = true;
                Event::Launch {
                    launch: get32(r, 4),
                    kernel: String::from_utf8_lossy(name).into_owned(),
                    threads: get32(r, 8),
                    ctas: get32(r, 12),
                    threads_per_cta: get32(r, 16),
                }
            }
            ACCESS => {
                let kind = match r[1] {
                    0 => AccessKind::Load,
                    1 => AccessKind::Store,
                    2 => AccessKind::Atomic,
                    _ => {
                        bad(&mut log, "the event log holds an unknown access kind");
                        break;
                    }
                };
                let (Some(sem), Some(scope)) = (Sem::from_code(r[2]), Scope::from_code(r[3]))
                else {
                    bad(
                        &mut log,
                        "the event log holds an unknown semantics or scope",
                    );
                    break;
                };
                let loc = if r[36] == 1 {
                    Location::Shared {
                        cta: get32(r, 40),
                        offset: get32(r, 44),
                    }
                } else {
                    Location::Global(get64(r, 40))
                };
                Event::Access(Access {
                    thread: thread_of(r),
                    loc,
                    size: get32(r, 4),
                    kind,
                    sem,
                    scope,
                    site: get32(r, 28),
                    launch: get32(r, 32),
                    indivisible: r[37] != 0,
                    newest: r[38] != 0,
                })
            }
            FENCE => {
                let kind = match r[1] {
                    0 => FenceKind::Sc,
                    1 => FenceKind::AcqRel,
                    2 => FenceKind::Acquire,
                    3 => FenceKind::Release,
                    _ => {
                        bad(&mut log, "the event log holds an unknown fence kind");
                        break;
                    }
                };
                let Some(scope) = Scope::from_code(r[3]) else {
                    bad(&mut log, "the event log holds an unknown scope");
                    break;
                };
                Event::Fence(Fence {
                    thread: thread_of(r),
                    kind,
                    scope,
                    site: get32(r, 28),
                })
            }
            BARRIER => {
                let kind = match r[1] {
                    0 => BarrierKind::Sync,
                    1 => BarrierKind::Arrive,
                    2 => BarrierKind::Warp,
                    _ => {
                        bad(&mut log, "the event log holds an unknown barrier kind");
                        break;
                    }
                };
                Event::Barrier(Barrier {
                    thread: thread_of(r),
                    kind,
                    id: get32(r, 4),
                    site: get32(r, 28),
                })
            }
            LAUNCH_END => {
                open = false;
                Event::LaunchEnd
            }
            FENCE_DRAINS => Event::FenceDrains {
                site: get32(r, 28),
                count: get64(r, 40),
            },
            TRUNCATED => {
                bad(
                    &mut log,
                    &format!(
                        "the program made more events than the log holds ({} MiB)",
                        MAX_BYTES >> 20
                    ),
                );
                break;
            }
            _ => {
                bad(&mut log, "the event log holds an unknown record");
                break;
            }
        };
        log.events.push(ev);
    }
    if open && log.incomplete.is_none() {
        log.incomplete = Some(
            "a launch's events end early (the program was killed or crashed during it)".into(),
        );
    }
    log
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(global: u32) -> ThreadRef {
        ThreadRef {
            cta: global / 64,
            tid: global % 64,
            global,
            lane: global % 32,
            warp: global / 32,
        }
    }

    #[test]
    fn every_event_reads_back_as_written() {
        let mut w = Writer::new(Vec::new());
        w.launch(&LaunchInfo {
            launch: 3,
            kernel: "_Z3dotv",
            threads: 512,
            ctas: 8,
            threads_per_cta: 64,
        });
        let a = Access {
            thread: t(70),
            loc: Location::Shared { cta: 1, offset: 24 },
            size: 4,
            kind: AccessKind::Atomic,
            sem: Sem::AcqRel,
            scope: Scope::Gpu,
            site: 17,
            launch: 3,
            indivisible: true,
            newest: true,
        };
        w.access(&a);
        w.access(&Access {
            loc: Location::Global(0xdead_beef_0000),
            kind: AccessKind::Store,
            sem: Sem::Weak,
            scope: Scope::Sys,
            indivisible: false,
            ..a
        });
        w.fence(&Fence {
            thread: t(5),
            kind: FenceKind::Release,
            scope: Scope::Cta,
            site: 9,
        });
        w.barrier(&Barrier {
            thread: t(6),
            kind: BarrierKind::Warp,
            id: 0xffff,
            site: 10,
        });
        w.end_launch();
        w.fence_drains(9, 42);
        let log = read(&w.w);
        assert!(log.incomplete.is_none());
        assert_eq!(log.events.len(), 7);
        let text = format!("{:?}", log.events);
        for want in [
            "kernel: \"_Z3dotv\"",
            "threads: 512",
            "Shared { cta: 1, offset: 24 }",
            "Atomic",
            "AcqRel",
            "indivisible: true",
            "newest: true",
            "Global(244837814042624)",
            "Release",
            "id: 65535",
            "FenceDrains { site: 9, count: 42 }",
        ] {
            assert!(text.contains(want), "{want} missing from {text}");
        }
    }

    #[test]
    fn a_full_or_torn_log_is_incomplete() {
        let mut w = Writer::with_limit(Vec::new(), 3 * RECORD as u64);
        for s in 0..5 {
            w.fence_drains(s, 1);
        }
        assert!(w.truncated());
        let log = read(&w.w);
        assert_eq!(log.events.len(), 2);
        assert!(log.incomplete.unwrap().contains("more events"));
        let mut w = Writer::new(Vec::new());
        w.fence_drains(1, 1);
        w.fence_drains(2, 1);
        let torn = &w.w[..RECORD + 7];
        let log = read(torn);
        assert_eq!(log.events.len(), 1);
        assert!(log.incomplete.unwrap().contains("torn"));
        // A launch that never ended (the process died in it).
        let mut w = Writer::new(Vec::new());
        let info = LaunchInfo {
            launch: 0,
            kernel: "k",
            threads: 1,
            ctas: 1,
            threads_per_cta: 1,
        };
        w.launch(&info);
        w.fence_drains(1, 1);
        assert!(read(&w.w).incomplete.unwrap().contains("end early"));
        w.end_launch();
        assert!(read(&w.w).incomplete.is_none());
    }
}
