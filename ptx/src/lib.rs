//! The PTX front end of fencehound: lexer, parser, typed IR and printer.
//!
//! Input is PTX as NVRTC and nvcc emit it (ISA 6.0–9.x, `sm_70`…`sm_100`) and as people
//! write it by hand. The instruction set is described once in [`table`]; the parser
//! validates against it, the printer spells from it, and the vgpu decodes with it.
//! `parse(print(m)) == m` for every module the parser accepts, and ptxas accepts what the
//! printer emits for anything NVRTC produced.

pub mod ast;
pub mod error;
pub mod lexer;
pub mod link;
pub mod parser;
pub mod printer;
pub mod table;

pub use ast::*;
pub use error::ParseError;
pub use link::link;
pub use parser::parse;
pub use printer::print;
pub use table::{Mod, ModClass, OpInfo, Opcode, OPCODES};
