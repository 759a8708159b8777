//! Virtual GPU.
