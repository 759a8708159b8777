//! The graph entry points (the `graph` module has the model). A child of `api`: it
//! uses its calling conventions (`device_call`, `host_call`, `put`) and its copy, set and
//! launch paths, so a replayed node does exactly what the call it was captured from does.

use super::*;

/// `enum cudaStreamCaptureStatus`.
const CAPTURE_NONE: c_int = 0;
const CAPTURE_ACTIVE: c_int = 1;

/// `struct cudaKernelNodeParams`.
#[repr(C)]
pub struct KernelNodeParams {
    pub func: *mut c_void,
    pub grid: Dim3C,
    pub block: Dim3C,
    pub shared: c_uint,
    pub params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
}

/// `struct cudaMemsetParams`.
#[repr(C)]
pub struct MemsetParams {
    pub dst: *mut c_void,
    pub pitch: usize,
    pub value: c_uint,
    pub elem: c_uint,
    pub width: usize,
    pub height: usize,
}

/// `struct cudaHostNodeParams`.
#[repr(C)]
pub struct HostNodeParams {
    pub f: Option<unsafe extern "C" fn(*mut c_void)>,
    pub data: *mut c_void,
}

fn capture_entry(name: &str, stream: *mut c_void, mode: c_int) -> CudaError {
    device_call(name, |rt| {
        check_stream(rt, stream)?;
        // The legacy default stream cannot be captured (cudaErrorStreamCaptureUnsupported),
        // nor can a stream be captured twice; modes 0-2 (global, thread local, relaxed).
        let s = stream as usize;
        if s == 0 || s == 1 || !(0..=2).contains(&mode) {
            return Err(if s <= 1 {
                CAPTURE_UNSUPPORTED
            } else {
                errors::INVALID_VALUE
            });
        }
        if rt.graphs.capturing.contains_key(&s) {
            return Err(CAPTURE_UNSUPPORTED);
        }
        let g = rt.handle();
        rt.graphs.graphs.insert(g, graph::Graph::default());
        rt.graphs.capturing.insert(
            s,
            graph::Capture {
                graph: g,
                frontier: Vec::new(),
            },
        );
        Ok(())
    })
}

forward_entries!([cudaStreamBeginCapture, cudaStreamBeginCapture_ptsz]
    (stream: *mut c_void, mode: c_int)
    => capture_entry(stream, mode));

fn end_capture(name: &str, stream: *mut c_void, out: *mut *mut c_void) -> CudaError {
    device_call(name, |rt| {
        check_stream(rt, stream)?;
        // cudaErrorIllegalState (401) when the stream is not capturing.
        let c = rt
            .graphs
            .capturing
            .get(&(stream as usize))
            .cloned()
            .ok_or(401)?;
        rt.graphs.end(c.graph);
        // SAFETY: API contract.
        unsafe { put(out, c.graph as *mut c_void) }
    })
}

forward_entries!([cudaStreamEndCapture, cudaStreamEndCapture_ptsz]
    (stream: *mut c_void, graph: *mut *mut c_void)
    => end_capture(stream, graph));

fn is_capturing(name: &str, stream: *mut c_void, status: *mut c_int) -> CudaError {
    host_call(name, |rt| {
        check_stream(rt, stream)?;
        let active = rt.graphs.capturing.contains_key(&(stream as usize));
        // SAFETY: API contract.
        unsafe { put(status, if active { CAPTURE_ACTIVE } else { CAPTURE_NONE }) }
    })
}

forward_entries!([cudaStreamIsCapturing, cudaStreamIsCapturing_ptsz]
    (stream: *mut c_void, status: *mut c_int)
    => is_capturing(stream, status));

/// `cudaStreamGetCaptureInfo` (CUDA 13): status, capture id, graph and the stream's
/// current dependencies (valid until the stream's next captured operation).
#[allow(clippy::too_many_arguments)]
fn capture_info(
    name: &str,
    stream: *mut c_void,
    status: *mut c_int,
    id: *mut u64,
    graph_out: *mut *mut c_void,
    deps: *mut *const *mut c_void,
    edges: *mut *const c_void,
    n: *mut usize,
) -> CudaError {
    host_call(name, |rt| {
        check_stream(rt, stream)?;
        if status.is_null() {
            return Err(errors::INVALID_VALUE);
        }
        let c = rt.graphs.capturing.get(&(stream as usize)).cloned();
        // SAFETY: API contract: `status` is required, the rest optional.
        unsafe {
            put(
                status,
                if c.is_some() {
                    CAPTURE_ACTIVE
                } else {
                    CAPTURE_NONE
                },
            )?;
            let Some(c) = c else { return Ok(()) };
            if !id.is_null() {
                put(id, c.graph as u64)?;
            }
            if !graph_out.is_null() {
                put(graph_out, c.graph as *mut c_void)?;
            }
            if !edges.is_null() {
                put(edges, std::ptr::null())?;
            }
            if !n.is_null() {
                put(n, c.frontier.len())?;
            }
            if !deps.is_null() {
                let p = rt.graphs.frontier_view(stream as usize, c.frontier.clone());
                put(deps, p)?;
            }
        }
        Ok(())
    })
}

macro_rules! capture_info_entry {
    ($($name:ident),*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            stream: *mut c_void,
            status: *mut c_int,
            id: *mut u64,
            graph_out: *mut *mut c_void,
            deps: *mut *const *mut c_void,
            edges: *mut *const c_void,
            n: *mut usize,
        ) -> CudaError {
            capture_info(stringify!($name), stream, status, id, graph_out, deps, edges, n)
        }
    )*};
}
capture_info_entry!(cudaStreamGetCaptureInfo, cudaStreamGetCaptureInfo_ptsz);

thread_local! {
    static CAPTURE_MODE: std::cell::Cell<c_int> = const { std::cell::Cell::new(0) };
}

/// Exchanges the thread's capture mode (recorded; every mode captures alike here).
#[no_mangle]
pub unsafe extern "C" fn cudaThreadExchangeStreamCaptureMode(mode: *mut c_int) -> CudaError {
    if mode.is_null() {
        return ret(errors::INVALID_VALUE);
    }
    // SAFETY: API contract.
    unsafe {
        let new = *mode;
        *mode = CAPTURE_MODE.with(|m| m.replace(new));
    }
    errors::SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cudaGraphCreate(graph: *mut *mut c_void, _flags: c_uint) -> CudaError {
    host_call("cudaGraphCreate", |rt| {
        let g = rt.handle();
        rt.graphs.graphs.insert(g, graph::Graph::default());
        // SAFETY: API contract.
        unsafe { put(graph, g as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGraphDestroy(graph: *mut c_void) -> CudaError {
    host_call("cudaGraphDestroy", |rt| {
        if rt.graphs.destroy(graph as usize) {
            Ok(())
        } else {
            Err(errors::INVALID_VALUE)
        }
    })
}

fn instantiate(name: &str, exec: *mut *mut c_void, graph: *mut c_void) -> CudaError {
    host_call(name, |rt| {
        let g = rt
            .graphs
            .graphs
            .get(&(graph as usize))
            .ok_or(errors::INVALID_VALUE)?;
        // A cycle cannot be instantiated (cudaErrorInvalidValue, as CUDA reports it).
        let ops = g.order().ok_or(errors::INVALID_VALUE)?;
        let h = rt.handle();
        rt.graphs.execs.insert(h, ops);
        // SAFETY: API contract.
        unsafe { put(exec, h as *mut c_void) }
    })
}

forward_entries!([cudaGraphInstantiate, cudaGraphInstantiateWithFlags]
    (exec: *mut *mut c_void, graph: *mut c_void, _flags: u64)
    => instantiate(exec, graph));

/// `cudaGraphExecUpdate`: the executable graph takes the graph's current nodes (always
/// possible here: nothing is compiled).
#[no_mangle]
pub unsafe extern "C" fn cudaGraphExecUpdate(
    exec: *mut c_void,
    graph: *mut c_void,
    info: *mut c_void,
) -> CudaError {
    host_call("cudaGraphExecUpdate", |rt| {
        if !rt.graphs.execs.contains_key(&(exec as usize)) {
            return Err(errors::INVALID_VALUE);
        }
        let g = rt
            .graphs
            .graphs
            .get(&(graph as usize))
            .ok_or(errors::INVALID_VALUE)?;
        let ops = g.order().ok_or(errors::INVALID_VALUE)?;
        rt.graphs.execs.insert(exec as usize, ops);
        if !info.is_null() {
            // cudaGraphExecUpdateResultInfo: result (cudaGraphExecUpdateSuccess = 0) and
            // two node handles.
            // SAFETY: API contract: the struct is an int and two pointers.
            unsafe { std::ptr::write_bytes(info as *mut u8, 0, 24) };
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGraphExecDestroy(exec: *mut c_void) -> CudaError {
    host_call("cudaGraphExecDestroy", |rt| {
        rt.graphs
            .execs
            .remove(&(exec as usize))
            .map(|_| ())
            .ok_or(errors::INVALID_VALUE)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGraphUpload(exec: *mut c_void, stream: *mut c_void) -> CudaError {
    host_call("cudaGraphUpload", |rt| {
        check_stream(rt, stream)?;
        if rt.graphs.execs.contains_key(&(exec as usize)) {
            Ok(())
        } else {
            Err(errors::INVALID_VALUE)
        }
    })
}

/// Runs the nodes of an executable graph in its order, each as the call it stands for:
/// kernels and memory operations on the device (one `device_call` each, so a fault stops
/// the rest and stays sticky), host functions with the runtime unlocked (they may call
/// the runtime).
fn graph_launch(name: &str, exec: *mut c_void, stream: *mut c_void) -> CudaError {
    let mut ops = Vec::new();
    let r = device_call(name, |rt| {
        check_stream(rt, stream)?;
        capture_unsupported(rt, stream as usize, name)?;
        ops = rt
            .graphs
            .execs
            .get(&(exec as usize))
            .cloned()
            .ok_or(errors::INVALID_VALUE)?;
        Ok(())
    });
    if r != errors::SUCCESS {
        return r;
    }
    for node in ops {
        let r = match node.op {
            NodeOp::Kernel {
                host,
                grid,
                block,
                shared,
                args,
            } => guard(name, || {
                with_rt(|rt| match rt.sticky() {
                    Some(e) => e,
                    None => managed_coherent(rt, |rt| {
                        rt.launch(host, grid, block, shared, false, &|i, size| {
                            let mut a = args.get(i).cloned().unwrap_or_default();
                            a.resize(size, 0);
                            a
                        })
                    }),
                })
                .unwrap_or_else(|e| e)
            }),
            // SAFETY: the pointers the program gave when it captured or added the copy,
            // valid when the graph runs (CUDA's contract for graph memory operations).
            NodeOp::Copy {
                dst,
                src,
                count,
                kind,
            } => device_call(name, |rt| unsafe { copy(rt, name, dst, src, count, kind) }),
            NodeOp::Set {
                dst,
                value,
                elem,
                width,
                height,
                pitch,
            } => device_call(name, |rt| {
                let row: Vec<u8> = (0..width)
                    .flat_map(|_| value.to_le_bytes()[..elem as usize].to_vec())
                    .collect();
                for y in 0..height {
                    rt.write_device(name, dst + (y * pitch) as u64, &row)?;
                }
                Ok(())
            }),
            NodeOp::Host { f, data } => {
                // SAFETY: a `cudaHostFn_t` the program gave, with its data, called as CUDA
                // calls a host node.
                let f: unsafe extern "C" fn(*mut c_void) = unsafe { std::mem::transmute(f) };
                unsafe { f(data as *mut c_void) };
                errors::SUCCESS
            }
            NodeOp::Empty => errors::SUCCESS,
        };
        if r != errors::SUCCESS {
            return r;
        }
    }
    errors::SUCCESS
}

forward_entries!([cudaGraphLaunch, cudaGraphLaunch_ptsz]
    (exec: *mut c_void, stream: *mut c_void)
    => graph_launch(exec, stream));

/// The handles of `n` dependencies.
///
/// # Safety
/// `deps` points to `n` node handles (or `n` is 0).
unsafe fn dep_list(deps: *const *mut c_void, n: usize) -> Result<Vec<usize>, CudaError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if deps.is_null() {
        return Err(errors::INVALID_VALUE);
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(deps, n) }
        .iter()
        .map(|p| *p as usize)
        .collect())
}

/// Adds a node made by `op` (which may fail) to `graph` after `deps`.
fn add_node(
    name: &str,
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    op: impl FnOnce(&mut Runtime) -> Result<NodeOp, CudaError>,
) -> CudaError {
    host_call(name, |rt| {
        if node.is_null() || !rt.graphs.graphs.contains_key(&(graph as usize)) {
            return Err(errors::INVALID_VALUE);
        }
        // SAFETY: API contract.
        let deps = unsafe { dep_list(deps, n) }?;
        let op = op(rt)?;
        let h = rt.handle();
        if !rt.graphs.add(graph as usize, h, op, deps) {
            return Err(errors::INVALID_VALUE);
        }
        // SAFETY: API contract.
        unsafe { put(node, h as *mut c_void) }
    })
}

/// A kernel node's operation: the argument values read now.
///
/// # Safety
/// `p` points to a `cudaKernelNodeParams` whose `kernelParams` holds one pointer per
/// kernel parameter.
unsafe fn kernel_op(rt: &mut Runtime, p: *const KernelNodeParams) -> Result<NodeOp, CudaError> {
    if p.is_null() {
        return Err(errors::INVALID_VALUE);
    }
    // SAFETY: the caller's contract.
    let p = unsafe { &*p };
    if p.params.is_null() && !p.extra.is_null() && rt.is_kernel(p.func as usize) {
        not_supported(
            rt,
            "kernel nodes with `extra` arguments",
            "a kernel node takes its arguments through `kernelParams`",
        )?;
    }
    // SAFETY: the caller's contract (`kernelParams` as a launch's `args`).
    unsafe {
        kernel_node(
            rt,
            p.func as usize,
            p.grid,
            p.block,
            p.shared as usize,
            p.params,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddKernelNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    params: *const KernelNodeParams,
) -> CudaError {
    // SAFETY: API contract.
    add_node(
        "cudaGraphAddKernelNode",
        node,
        graph,
        deps,
        n,
        |rt| unsafe { kernel_op(rt, params) },
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cudaGraphAddMemcpyNode1D(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
) -> CudaError {
    add_node("cudaGraphAddMemcpyNode1D", node, graph, deps, n, |_| {
        Ok(NodeOp::Copy {
            dst: dst as u64,
            src: src as u64,
            count,
            kind,
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddMemsetNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    params: *const MemsetParams,
) -> CudaError {
    add_node("cudaGraphAddMemsetNode", node, graph, deps, n, |_| {
        if params.is_null() {
            return Err(errors::INVALID_VALUE);
        }
        // SAFETY: API contract.
        let p = unsafe { &*params };
        let height = p.height.max(1);
        if !matches!(p.elem, 1 | 2 | 4) || (height > 1 && p.pitch < p.width * p.elem as usize) {
            return Err(errors::INVALID_VALUE);
        }
        Ok(NodeOp::Set {
            dst: p.dst as u64,
            value: p.value,
            elem: p.elem,
            width: p.width,
            height,
            pitch: p.pitch,
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddHostNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    params: *const HostNodeParams,
) -> CudaError {
    add_node("cudaGraphAddHostNode", node, graph, deps, n, |_| {
        // SAFETY: API contract.
        match unsafe { params.as_ref() } {
            Some(HostNodeParams { f: Some(f), data }) => Ok(NodeOp::Host {
                f: *f as usize,
                data: *data as usize,
            }),
            _ => Err(errors::INVALID_VALUE),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddEmptyNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
) -> CudaError {
    add_node("cudaGraphAddEmptyNode", node, graph, deps, n, |_| {
        Ok(NodeOp::Empty)
    })
}

/// `cudaGraphAddDependencies` (CUDA 13: with edge data, which only carries
/// programmatic-launch ports here ignored — every edge is a full dependency).
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddDependencies(
    graph: *mut c_void,
    from: *const *mut c_void,
    to: *const *mut c_void,
    _edges: *const c_void,
    n: usize,
) -> CudaError {
    host_call("cudaGraphAddDependencies", |rt| {
        // SAFETY: API contract: `from` and `to` hold `n` nodes each.
        let (from, to) = unsafe { (dep_list(from, n)?, dep_list(to, n)?) };
        let g = graph as usize;
        if from
            .iter()
            .chain(&to)
            .any(|h| rt.graphs.node_graph.get(h) != Some(&g))
        {
            return Err(errors::INVALID_VALUE);
        }
        let graph = rt.graphs.graphs.get_mut(&g).ok_or(errors::INVALID_VALUE)?;
        for (a, b) in from.into_iter().zip(to) {
            if let Some(node) = graph.nodes.iter_mut().find(|x| x.handle == b) {
                if !node.deps.contains(&a) {
                    node.deps.push(a);
                }
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGraphGetNodes(
    graph: *mut c_void,
    nodes: *mut *mut c_void,
    n: *mut usize,
) -> CudaError {
    host_call("cudaGraphGetNodes", |rt| {
        let g = rt
            .graphs
            .graphs
            .get(&(graph as usize))
            .ok_or(errors::INVALID_VALUE)?;
        if n.is_null() {
            return Err(errors::INVALID_VALUE);
        }
        // SAFETY: API contract: with `nodes`, `*n` is its capacity.
        unsafe {
            if !nodes.is_null() {
                for (i, node) in g.nodes.iter().take(*n).enumerate() {
                    *nodes.add(i) = node.handle as *mut c_void;
                }
            }
            *n = g.nodes.len();
        }
        Ok(())
    })
}

/// Replaces the operation of kernel node `node` in its graph, or (with `exec`) in that
/// executable graph only.
fn set_kernel_params(
    name: &str,
    exec: Option<usize>,
    node: *mut c_void,
    params: *const KernelNodeParams,
) -> CudaError {
    host_call(name, |rt| {
        let node = node as usize;
        let g = *rt
            .graphs
            .node_graph
            .get(&node)
            .ok_or(errors::INVALID_VALUE)?;
        // SAFETY: API contract.
        let op = unsafe { kernel_op(rt, params) }?;
        let nodes = match exec {
            Some(e) => rt.graphs.execs.get_mut(&e),
            None => rt.graphs.graphs.get_mut(&g).map(|g| &mut g.nodes),
        }
        .ok_or(errors::INVALID_VALUE)?;
        match nodes.iter_mut().find(|x| x.handle == node) {
            Some(n) if matches!(n.op, NodeOp::Kernel { .. }) => {
                n.op = op;
                Ok(())
            }
            _ => Err(errors::INVALID_VALUE),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cudaGraphKernelNodeSetParams(
    node: *mut c_void,
    params: *const KernelNodeParams,
) -> CudaError {
    set_kernel_params("cudaGraphKernelNodeSetParams", None, node, params)
}

#[no_mangle]
pub unsafe extern "C" fn cudaGraphExecKernelNodeSetParams(
    exec: *mut c_void,
    node: *mut c_void,
    params: *const KernelNodeParams,
) -> CudaError {
    set_kernel_params(
        "cudaGraphExecKernelNodeSetParams",
        Some(exec as usize),
        node,
        params,
    )
}
