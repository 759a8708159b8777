//! CUDA runtime error codes (`enum cudaError` of CUDA 13's `driver_types.h`): the
//! numbers and names are the API's; the descriptions are ours.

pub type CudaError = i32;

pub const SUCCESS: CudaError = 0;
pub const INVALID_VALUE: CudaError = 1;
pub const MEMORY_ALLOCATION: CudaError = 2;
pub const INITIALIZATION_ERROR: CudaError = 3;
pub const INVALID_CONFIGURATION: CudaError = 9;
pub const INVALID_SYMBOL: CudaError = 13;
pub const INVALID_DEVICE_POINTER: CudaError = 17;
pub const INVALID_MEMCPY_DIRECTION: CudaError = 21;
pub const INVALID_DEVICE_FUNCTION: CudaError = 98;
pub const INVALID_DEVICE: CudaError = 101;
pub const INVALID_KERNEL_IMAGE: CudaError = 200;
pub const NO_KERNEL_IMAGE_FOR_DEVICE: CudaError = 209;
pub const INVALID_PTX: CudaError = 218;
pub const INVALID_RESOURCE_HANDLE: CudaError = 400;
pub const NOT_READY: CudaError = 600;
pub const ILLEGAL_ADDRESS: CudaError = 700;
pub const LAUNCH_OUT_OF_RESOURCES: CudaError = 701;
pub const LAUNCH_TIMEOUT: CudaError = 702;
pub const ASSERT: CudaError = 710;
pub const MISALIGNED_ADDRESS: CudaError = 716;
pub const LAUNCH_FAILURE: CudaError = 719;
pub const COOPERATIVE_LAUNCH_TOO_LARGE: CudaError = 720;
pub const NOT_SUPPORTED: CudaError = 801;
pub const UNKNOWN: CudaError = 999;

/// Every code of CUDA 13's `enum cudaError`, with its name.
const NAMES: &[(CudaError, &str)] = &[
    (0, "cudaSuccess"),
    (1, "cudaErrorInvalidValue"),
    (2, "cudaErrorMemoryAllocation"),
    (3, "cudaErrorInitializationError"),
    (4, "cudaErrorCudartUnloading"),
    (5, "cudaErrorProfilerDisabled"),
    (6, "cudaErrorProfilerNotInitialized"),
    (7, "cudaErrorProfilerAlreadyStarted"),
    (8, "cudaErrorProfilerAlreadyStopped"),
    (9, "cudaErrorInvalidConfiguration"),
    (10, "cudaErrorVersionTranslation"),
    (12, "cudaErrorInvalidPitchValue"),
    (13, "cudaErrorInvalidSymbol"),
    (16, "cudaErrorInvalidHostPointer"),
    (17, "cudaErrorInvalidDevicePointer"),
    (18, "cudaErrorInvalidTexture"),
    (19, "cudaErrorInvalidTextureBinding"),
    (20, "cudaErrorInvalidChannelDescriptor"),
    (21, "cudaErrorInvalidMemcpyDirection"),
    (22, "cudaErrorAddressOfConstant"),
    (23, "cudaErrorTextureFetchFailed"),
    (24, "cudaErrorTextureNotBound"),
    (25, "cudaErrorSynchronizationError"),
    (26, "cudaErrorInvalidFilterSetting"),
    (27, "cudaErrorInvalidNormSetting"),
    (28, "cudaErrorMixedDeviceExecution"),
    (31, "cudaErrorNotYetImplemented"),
    (32, "cudaErrorMemoryValueTooLarge"),
    (34, "cudaErrorStubLibrary"),
    (35, "cudaErrorInsufficientDriver"),
    (36, "cudaErrorCallRequiresNewerDriver"),
    (37, "cudaErrorInvalidSurface"),
    (43, "cudaErrorDuplicateVariableName"),
    (44, "cudaErrorDuplicateTextureName"),
    (45, "cudaErrorDuplicateSurfaceName"),
    (46, "cudaErrorDevicesUnavailable"),
    (49, "cudaErrorIncompatibleDriverContext"),
    (52, "cudaErrorMissingConfiguration"),
    (53, "cudaErrorPriorLaunchFailure"),
    (65, "cudaErrorLaunchMaxDepthExceeded"),
    (66, "cudaErrorLaunchFileScopedTex"),
    (67, "cudaErrorLaunchFileScopedSurf"),
    (68, "cudaErrorSyncDepthExceeded"),
    (69, "cudaErrorLaunchPendingCountExceeded"),
    (98, "cudaErrorInvalidDeviceFunction"),
    (100, "cudaErrorNoDevice"),
    (101, "cudaErrorInvalidDevice"),
    (102, "cudaErrorDeviceNotLicensed"),
    (103, "cudaErrorSoftwareValidityNotEstablished"),
    (127, "cudaErrorStartupFailure"),
    (200, "cudaErrorInvalidKernelImage"),
    (201, "cudaErrorDeviceUninitialized"),
    (205, "cudaErrorMapBufferObjectFailed"),
    (206, "cudaErrorUnmapBufferObjectFailed"),
    (207, "cudaErrorArrayIsMapped"),
    (208, "cudaErrorAlreadyMapped"),
    (209, "cudaErrorNoKernelImageForDevice"),
    (210, "cudaErrorAlreadyAcquired"),
    (211, "cudaErrorNotMapped"),
    (212, "cudaErrorNotMappedAsArray"),
    (213, "cudaErrorNotMappedAsPointer"),
    (214, "cudaErrorECCUncorrectable"),
    (215, "cudaErrorUnsupportedLimit"),
    (216, "cudaErrorDeviceAlreadyInUse"),
    (217, "cudaErrorPeerAccessUnsupported"),
    (218, "cudaErrorInvalidPtx"),
    (219, "cudaErrorInvalidGraphicsContext"),
    (220, "cudaErrorNvlinkUncorrectable"),
    (221, "cudaErrorJitCompilerNotFound"),
    (222, "cudaErrorUnsupportedPtxVersion"),
    (223, "cudaErrorJitCompilationDisabled"),
    (224, "cudaErrorUnsupportedExecAffinity"),
    (225, "cudaErrorUnsupportedDevSideSync"),
    (226, "cudaErrorContained"),
    (227, "cudaErrorInsufficientLoaderVersion"),
    (300, "cudaErrorInvalidSource"),
    (301, "cudaErrorFileNotFound"),
    (302, "cudaErrorSharedObjectSymbolNotFound"),
    (303, "cudaErrorSharedObjectInitFailed"),
    (304, "cudaErrorOperatingSystem"),
    (400, "cudaErrorInvalidResourceHandle"),
    (401, "cudaErrorIllegalState"),
    (402, "cudaErrorLossyQuery"),
    (500, "cudaErrorSymbolNotFound"),
    (600, "cudaErrorNotReady"),
    (700, "cudaErrorIllegalAddress"),
    (701, "cudaErrorLaunchOutOfResources"),
    (702, "cudaErrorLaunchTimeout"),
    (703, "cudaErrorLaunchIncompatibleTexturing"),
    (704, "cudaErrorPeerAccessAlreadyEnabled"),
    (705, "cudaErrorPeerAccessNotEnabled"),
    (708, "cudaErrorSetOnActiveProcess"),
    (709, "cudaErrorContextIsDestroyed"),
    (710, "cudaErrorAssert"),
    (711, "cudaErrorTooManyPeers"),
    (712, "cudaErrorHostMemoryAlreadyRegistered"),
    (713, "cudaErrorHostMemoryNotRegistered"),
    (714, "cudaErrorHardwareStackError"),
    (715, "cudaErrorIllegalInstruction"),
    (716, "cudaErrorMisalignedAddress"),
    (717, "cudaErrorInvalidAddressSpace"),
    (718, "cudaErrorInvalidPc"),
    (719, "cudaErrorLaunchFailure"),
    (720, "cudaErrorCooperativeLaunchTooLarge"),
    (721, "cudaErrorTensorMemoryLeak"),
    (800, "cudaErrorNotPermitted"),
    (801, "cudaErrorNotSupported"),
    (802, "cudaErrorSystemNotReady"),
    (803, "cudaErrorSystemDriverMismatch"),
    (804, "cudaErrorCompatNotSupportedOnDevice"),
    (805, "cudaErrorMpsConnectionFailed"),
    (806, "cudaErrorMpsRpcFailure"),
    (807, "cudaErrorMpsServerNotReady"),
    (808, "cudaErrorMpsMaxClientsReached"),
    (809, "cudaErrorMpsMaxConnectionsReached"),
    (810, "cudaErrorMpsClientTerminated"),
    (811, "cudaErrorCdpNotSupported"),
    (812, "cudaErrorCdpVersionMismatch"),
    (900, "cudaErrorStreamCaptureUnsupported"),
    (901, "cudaErrorStreamCaptureInvalidated"),
    (902, "cudaErrorStreamCaptureMerge"),
    (903, "cudaErrorStreamCaptureUnmatched"),
    (904, "cudaErrorStreamCaptureUnjoined"),
    (905, "cudaErrorStreamCaptureIsolation"),
    (906, "cudaErrorStreamCaptureImplicit"),
    (907, "cudaErrorCapturedEvent"),
    (908, "cudaErrorStreamCaptureWrongThread"),
    (909, "cudaErrorTimeout"),
    (910, "cudaErrorGraphExecUpdateFailure"),
    (911, "cudaErrorExternalDevice"),
    (912, "cudaErrorInvalidClusterSize"),
    (913, "cudaErrorFunctionNotLoaded"),
    (914, "cudaErrorInvalidResourceType"),
    (915, "cudaErrorInvalidResourceConfiguration"),
    (917, "cudaErrorStreamDetached"),
    (918, "cudaErrorGraphRecaptureFailure"),
    (919, "cudaErrorFabricNotReady"),
    (999, "cudaErrorUnknown"),
    (10000, "cudaErrorApiFailureBase"),
];

/// `cudaGetErrorName`: the enumerator's name.
pub fn name(code: CudaError) -> Option<&'static str> {
    NAMES.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// `cudaGetErrorString`: what the error means, for the codes this runtime returns; other
/// codes are described by their name.
pub fn description(code: CudaError) -> &'static str {
    match code {
        SUCCESS => "no error",
        INVALID_VALUE => "invalid argument",
        MEMORY_ALLOCATION => "out of memory",
        INITIALIZATION_ERROR => "initialization error (fencehound's runtime could not start; see its message on stderr)",
        INVALID_CONFIGURATION => "invalid configuration argument",
        INVALID_SYMBOL => "invalid device symbol",
        INVALID_DEVICE_POINTER => "invalid device pointer",
        INVALID_MEMCPY_DIRECTION => "invalid copy direction for memcpy",
        INVALID_DEVICE_FUNCTION => "invalid device function",
        INVALID_DEVICE => "invalid device ordinal",
        INVALID_KERNEL_IMAGE => "device kernel image is invalid",
        NO_KERNEL_IMAGE_FOR_DEVICE => "no kernel image is available for execution on the device (the fat binary holds no PTX)",
        INVALID_PTX => "a PTX JIT compilation failed (the virtual GPU cannot run this PTX; see the message on stderr)",
        INVALID_RESOURCE_HANDLE => "invalid resource handle",
        NOT_READY => "device not ready",
        ILLEGAL_ADDRESS => "an illegal memory access was encountered",
        LAUNCH_OUT_OF_RESOURCES => "too many resources requested for launch",
        LAUNCH_TIMEOUT => "the launch timed out and was terminated",
        ASSERT => "device-side assert triggered",
        MISALIGNED_ADDRESS => "misaligned address",
        LAUNCH_FAILURE => "unspecified launch failure",
        COOPERATIVE_LAUNCH_TOO_LARGE => "too many blocks in cooperative launch",
        NOT_SUPPORTED => "operation not supported (by fencehound's CUDA runtime; see its message on stderr)",
        UNKNOWN => "unknown error",
        other => name(other).unwrap_or("unrecognized error code"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_match_codes() {
        assert_eq!(super::name(700), Some("cudaErrorIllegalAddress"));
        assert_eq!(super::name(0), Some("cudaSuccess"));
        assert_eq!(super::name(123456), None);
        assert_eq!(super::description(716), "misaligned address");
    }
}
