//! NVRTC and ptxas.
