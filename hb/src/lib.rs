//! PTX happens-before for fencehound, in one place: the `weak` memory model
//! (`fencehound-handlers`) decides which stores a load may still read from it, and the race
//! check (`fencehound-racecheck`) decides which accesses are unordered. Sharing the rules
//! is what keeps the two from disagreeing about what synchronizes.
//!
//! * [`clock`]: vector clocks over epochs, chunked per CTA and shared, for large grids.
//! * [`fasthash`]: the hasher for small integer keys the simulator's hooks share.
//! * [`ids`]: CTA ids, thread ids, threads per CTA and epochs, each its own type.
//! * [`obs`]: stores observed through morally strong reads (causality's observation step).
//! * [`ord`]: read and write orderings (a read cannot release, a write cannot acquire),
//!   converted from the vgpu's `Sem` at the boundary.
//! * [`sync`]: the synchronization rules — release/acquire patterns with scopes, release
//!   sequences through RMWs, fence-SC order, barriers — as an engine fed with a launch's
//!   events.

pub mod clock;
pub mod fasthash;
pub mod ids;
pub mod obs;
pub mod ord;
pub mod sync;

pub use clock::VClock;
pub use ids::{CtaId, Epoch, Tid, Tpb};
pub use obs::Obs;
pub use ord::{ReadOrd, WriteOrd};
pub use sync::{acquires, releases, scopes_meet, strong, wide, Hb, Knowledge, Message, Part};
