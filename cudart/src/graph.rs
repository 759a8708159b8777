//! CUDA graphs: stream capture (`cudaStreamBeginCapture` … `cudaStreamEndCapture`), graphs
//! built node by node (`cudaGraphAdd*Node`, `cudaGraphAddDependencies`), instantiation and
//! launch. Modern CUDA code — and libraries built on it — records its launches once and
//! replays them; before this module every such call returned `cudaErrorNotSupported`.
//!
//! A node holds what CUDA copies when the node is made: a kernel's argument *values*
//! (read through `kernelParams` at capture or `cudaGraphAddKernelNode`), a copy's and a
//! set's pointers and sizes, a host function and its data. Instantiation fixes an order
//! of the nodes that respects every dependency (Kahn's algorithm, ties by creation order);
//! a launch runs the nodes in that order, each to completion, exactly as this runtime runs
//! streams. A graph lets independent nodes overlap; running them one after another is
//! one of the executions it allows (the same choice the runtime makes for streams).
//!
//! Capture: an operation on a capturing stream becomes a node that depends on the
//! stream's last nodes (its capture frontier) instead of running. `cudaEventRecord` on a
//! capturing stream remembers the frontier; `cudaStreamWaitEvent` on such an event makes
//! the waiting stream join the capture (fork) or adds the frontier to its own (join), so
//! multi-stream captures give the graph CUDA would build. Operations this runtime cannot
//! record (2-D and symbol copies, stream callbacks, synchronizing a capturing stream)
//! return `cudaErrorStreamCaptureUnsupported` with a message, never run at capture time.
//! `cudaMallocAsync` during capture allocates at once (a graph's allocation has a fixed
//! address for the graph's lifetime); `cudaFreeAsync` during capture frees nothing (the
//! memory stays allocated until `cudaDeviceReset`), so replays never touch freed memory.

use std::collections::HashMap;

/// What a node does.
#[derive(Debug, Clone)]
pub enum NodeOp {
    Kernel {
        host: usize,
        grid: fencehound_vgpu::Dim3,
        block: fencehound_vgpu::Dim3,
        shared: usize,
        /// Argument values, one per kernel parameter.
        args: Vec<Vec<u8>>,
    },
    /// A 1-D copy (`cudaMemcpyKind` in `kind`).
    Copy {
        dst: u64,
        src: u64,
        count: usize,
        kind: i32,
    },
    /// `height` rows of `width` elements of `elem` bytes each set to `value`, rows
    /// `pitch` bytes apart.
    Set {
        dst: u64,
        value: u32,
        elem: u32,
        width: usize,
        height: usize,
        pitch: usize,
    },
    /// A host function and its argument.
    Host {
        f: usize,
        data: usize,
    },
    Empty,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub handle: usize,
    pub op: NodeOp,
    pub deps: Vec<usize>,
}

/// A graph: its nodes in creation order.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
}

impl Graph {
    /// The nodes in an order that respects every dependency, ties by creation order;
    /// `None` for a cycle.
    pub fn order(&self) -> Option<Vec<Node>> {
        let index: HashMap<usize, usize> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.handle, i))
            .collect();
        let mut waiting: Vec<usize> = self.nodes.iter().map(|n| n.deps.len()).collect();
        let mut after: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            for d in &n.deps {
                after[*index.get(d)?].push(i);
            }
        }
        let mut ready: std::collections::BTreeSet<usize> =
            (0..self.nodes.len()).filter(|i| waiting[*i] == 0).collect();
        let mut out = Vec::with_capacity(self.nodes.len());
        while let Some(i) = ready.pop_first() {
            out.push(self.nodes[i].clone());
            for &j in &after[i] {
                waiting[j] -= 1;
                if waiting[j] == 0 {
                    ready.insert(j);
                }
            }
        }
        (out.len() == self.nodes.len()).then_some(out)
    }
}

/// A capture in progress on one stream.
#[derive(Debug, Clone)]
pub struct Capture {
    pub graph: usize,
    /// The stream's last nodes: what its next operation depends on.
    pub frontier: Vec<usize>,
}

/// Every graph, instantiated graph and capture of the process.
#[derive(Debug, Default)]
pub struct Graphs {
    pub graphs: HashMap<usize, Graph>,
    /// Instantiated graphs: their nodes in launch order.
    pub execs: HashMap<usize, Vec<Node>>,
    /// The graph each node belongs to.
    pub node_graph: HashMap<usize, usize>,
    pub capturing: HashMap<usize, Capture>,
    /// Events recorded on a capturing stream: the capture's graph and the frontier then.
    pub events: HashMap<usize, Capture>,
    /// Per stream, the dependency list `cudaStreamGetCaptureInfo` last handed out (valid
    /// until the next call, as CUDA's is until the stream's next captured operation).
    views: HashMap<usize, Vec<usize>>,
}

impl Graphs {
    /// Adds `op` to `graph` after `deps` (nodes of that graph) as node `handle`.
    pub fn add(&mut self, graph: usize, handle: usize, op: NodeOp, deps: Vec<usize>) -> bool {
        if deps.iter().any(|d| self.node_graph.get(d) != Some(&graph)) {
            return false;
        }
        let Some(g) = self.graphs.get_mut(&graph) else {
            return false;
        };
        g.nodes.push(Node { handle, op, deps });
        self.node_graph.insert(handle, graph);
        true
    }

    /// Records `op` on capturing `stream` as node `handle`; false if the stream is not
    /// capturing.
    pub fn record(&mut self, stream: usize, handle: usize, op: NodeOp) -> bool {
        let Some(c) = self.capturing.get(&stream).cloned() else {
            return false;
        };
        self.add(c.graph, handle, op, c.frontier);
        if let Some(c) = self.capturing.get_mut(&stream) {
            c.frontier = vec![handle];
        }
        true
    }

    /// Ends every capture into `graph` (the origin stream's and the streams that joined).
    pub fn end(&mut self, graph: usize) {
        self.capturing.retain(|_, c| c.graph != graph);
        self.events.retain(|_, c| c.graph != graph);
    }

    /// Keeps `list` (node handles) for `stream` and returns it as a C array of handles.
    pub fn frontier_view(
        &mut self,
        stream: usize,
        list: Vec<usize>,
    ) -> *const *mut std::ffi::c_void {
        let v = self.views.entry(stream).or_default();
        *v = list;
        v.as_ptr() as *const *mut std::ffi::c_void
    }

    /// Removes a graph and its nodes.
    pub fn destroy(&mut self, graph: usize) -> bool {
        let Some(g) = self.graphs.remove(&graph) else {
            return false;
        };
        for n in g.nodes {
            self.node_graph.remove(&n.handle);
        }
        self.end(graph);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(usize, usize)], n: usize) -> Graph {
        let mut g = Graph::default();
        for i in 0..n {
            let deps = edges
                .iter()
                .filter(|(_, to)| *to == i)
                .map(|(from, _)| 100 + from)
                .collect();
            g.nodes.push(Node {
                handle: 100 + i,
                op: NodeOp::Host { f: 0, data: i },
                deps,
            });
        }
        g
    }

    fn datas(ops: &[Node]) -> Vec<usize> {
        ops.iter()
            .map(|n| match &n.op {
                NodeOp::Host { data, .. } => *data,
                _ => usize::MAX,
            })
            .collect()
    }

    #[test]
    fn order_respects_dependencies_then_creation() {
        // 2 → 0 → 1, 3 free: the lowest ready node first, so 0 and 1 as soon as ready.
        let g = graph(&[(2, 0), (0, 1)], 4);
        assert_eq!(datas(&g.order().unwrap()), vec![2, 0, 1, 3]);
        // A diamond.
        let g = graph(&[(0, 1), (0, 2), (1, 3), (2, 3)], 4);
        assert_eq!(datas(&g.order().unwrap()), vec![0, 1, 2, 3]);
        // A cycle has no order.
        assert!(graph(&[(0, 1), (1, 0)], 2).order().is_none());
    }
}
