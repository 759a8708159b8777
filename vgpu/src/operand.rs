//! Register slots and source operands: the vocabulary shared by the decoded program
//! ([`crate::program`]), the ALU ([`crate::alu`]) and the interpreter ([`crate::exec`]).
//! It depends on nothing else in the crate, so those modules do not depend on each other
//! for it.

/// A register slot in the current frame. Slot 0 is the carry flag (`CC.CF`).
pub type Slot = u32;

pub const CC_SLOT: Slot = 0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    Reg(Slot),
    /// `!p`
    NotReg(Slot),
    Imm(u64),
    /// A special register (`%tid.x`: the register and its dimension), read per lane.
    Special(fencehound_ptx::Special, u8),
    /// The local-space address of a frame variable (`mov %SPL, __local_depot0`).
    LocalAddr(u32),
}
