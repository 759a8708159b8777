//! PTX happens-before for fencehound, in one place: the `weak` memory model
//! (`fencehound-handlers`) decides which stores a load may still read from it, and the race
//! check (`fencehound-racecheck`) decides which accesses are unordered. Sharing the rules
//! is what keeps the two from disagreeing about what synchronizes.
//!
//! * [`clock`]: vector clocks over epochs, chunked per CTA and shared, for large grids.
//! * [`fasthash`]: the hasher for small integer keys the simulator's hooks share.
//! * [`obs`]: stores observed through morally strong reads (causality's observation step).
//! * [`sync`]: the synchronization rules — release/acquire patterns with scopes, release
//!   sequences through RMWs, fence-SC order, barriers — as an engine fed with a launch's
//!   events.

pub mod clock;
pub mod fasthash;
pub mod obs;
pub mod sync;

pub use clock::{Epoch, VClock};
pub use obs::Obs;
pub use sync::{acquires, releases, scopes_meet, strong, wide, Hb, Knowledge, Message, Part};
