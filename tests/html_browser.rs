//! The HTML report in a real browser: Debian's Chromium, headless, driven over the W3C
//! WebDriver protocol by ChromeDriver (a few JSON requests over HTTP on loopback, sent
//! by hand below). The page must load from a file with no console error and no network
//! request at all, and show one rate plot per variant, each a non-empty SVG.
//!
//! This test binary has its own harness (`harness = false`): where Chromium or
//! ChromeDriver is missing it prints that it was SKIPPED and prints no `test result:`
//! line, so nothing counts it as passed; `.ci/run` installs both when apt can (see
//! `docs/nightly.md`). `FENCEHOUND_CHROMIUM` and `FENCEHOUND_CHROMEDRIVER` point at
//! other binaries.

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_fencehound");
const NAME: &str = "html_report_loads_in_headless_chromium_with_one_plot_per_variant";

fn find(env: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p)).filter(|p| p.exists());
    }
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|n| {
        std::env::split_paths(&path)
            .map(|d| d.join(n))
            .find(|p| p.is_file())
    })
}

fn main() {
    let chromium = find(
        "FENCEHOUND_CHROMIUM",
        &["chromium", "chromium-browser", "google-chrome"],
    );
    let driver = find("FENCEHOUND_CHROMEDRIVER", &["chromedriver"]);
    let (Some(chromium), Some(driver)) = (chromium, driver) else {
        println!(
            "test {NAME} ... SKIPPED: no Chromium and ChromeDriver here (Debian: apt-get install chromium chromium-driver); not counted as passed"
        );
        return;
    };
    println!("\nrunning 1 test");
    let start = Instant::now();
    let outcome = std::panic::catch_unwind(|| html_report(&chromium, &driver));
    let secs = start.elapsed().as_secs_f64();
    match outcome {
        Ok(()) => {
            println!("test {NAME} ... ok");
            println!("\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in {secs:.2}s\n");
        }
        Err(_) => {
            println!("test {NAME} ... FAILED");
            println!("\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in {secs:.2}s\n");
            std::process::exit(101);
        }
    }
}

/// ChromeDriver, ended on drop.
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    fn start(driver: &Path) -> Driver {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            l.local_addr().unwrap().port()
        };
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .arg("--allowed-ips=127.0.0.1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let d = Driver { child, port };
        let t = Instant::now();
        loop {
            if let Ok(v) = d.try_request("GET", "/status", None) {
                if v["value"]["ready"] == true {
                    return d;
                }
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "chromedriver did not get ready"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn try_request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> std::io::Result<Value> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port))?;
        s.set_read_timeout(Some(Duration::from_secs(120)))?;
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        )?;
        // ChromeDriver keeps the connection open whatever the request says: read the
        // header, then exactly Content-Length bytes (or the chunks).
        let mut raw = Vec::new();
        let mut buf = [0u8; 8192];
        let header_end = loop {
            let n = s.read(&mut buf)?;
            if n == 0 {
                return Err(std::io::Error::other("connection closed before the header"));
            }
            raw.extend_from_slice(&buf[..n]);
            if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&raw[..header_end]).to_ascii_lowercase();
        let length = head.lines().find_map(|l| {
            l.strip_prefix("content-length:")
                .and_then(|v| v.trim().parse::<usize>().ok())
        });
        let chunked = head.contains("transfer-encoding: chunked");
        loop {
            let have = raw.len() - header_end;
            let done = match length {
                Some(n) => have >= n,
                None if chunked => raw.ends_with(b"0\r\n\r\n"),
                None => false,
            };
            if done {
                break;
            }
            let n = s.read(&mut buf)?;
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
        }
        let rest = String::from_utf8_lossy(&raw[header_end..]).into_owned();
        let body = if chunked { dechunk(&rest) } else { rest };
        serde_json::from_str(&body).map_err(std::io::Error::other)
    }

    #[track_caller]
    fn request(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let v = self
            .try_request(method, path, body.as_ref())
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        assert!(
            v["value"].get("error").is_none(),
            "{method} {path}: {}",
            v["value"]
        );
        v["value"].clone()
    }
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// A browser session with the flags Chromium needs on these machines (no sandbox as
/// root, no GPU, no background connections: the network is closed).
fn session(d: &Driver, chromium: &Path, profile: &Path) -> String {
    let caps = json!({
        "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--window-size=1280,2000",
                    format!("--user-data-dir={}", profile.display()),
                ],
            },
            "goog:loggingPrefs": { "browser": "ALL" },
        }}
    });
    let v = d.request("POST", "/session", Some(caps));
    v["sessionId"].as_str().expect("a session id").to_string()
}

/// Console messages at level SEVERE since the last call.
fn console_errors(d: &Driver, sid: &str) -> Vec<String> {
    let v = d.request(
        "POST",
        &format!("/session/{sid}/se/log"),
        Some(json!({ "type": "browser" })),
    );
    v.as_array()
        .expect("a log array")
        .iter()
        .filter(|e| e["level"] == "SEVERE")
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn open(d: &Driver, sid: &str, file: &Path) {
    let url = format!("file://{}", file.display());
    d.request(
        "POST",
        &format!("/session/{sid}/url"),
        Some(json!({ "url": url })),
    );
}

fn script(d: &Driver, sid: &str, js: &str) -> Value {
    d.request(
        "POST",
        &format!("/session/{sid}/execute/sync"),
        Some(json!({ "script": js, "args": [] })),
    )
}

const CBE_DOT: &str = r#"
source = "cbe_dot.cu"
seed = 7
buffers = [
  "a:i32[2048] random(11,-8,8)",
  "b:i32[2048] random(12,-8,8)",
  "c:f32[1] zero",
  "mutex:i32[1] zero",
]

[[launch]]
kernel = "dot"
grid = [8]
block = [64]
args = ["a", "b", "c", "mutex", "n:i32=2048"]

[[oracle]]
type = "golden"
buffers = ["c", "mutex"]

[budget]
fuel = 2_000_000
wall_ms = 5_000

[fuzz]
models = ["bugaroo", "scoped"]
p = [0.25, 0.5, 1.0]
runs = 6

[variants.two_fences]
expect = "pass"

[variants.no_fence]
defines = { LOCK_FENCE = "(void)0", UNLOCK_FENCE = "(void)0" }
expect = "fail"

[variants.block_fence]
defines = { LOCK_FENCE = "(void)0", UNLOCK_FENCE = "__threadfence_block()" }
expect = { bugaroo = "pass", scoped = "fail" }
"#;

fn html_report(chromium: &Path, driver: &Path) {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = tempfile::tempdir().expect("temp dir");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("campaigns/cbe_dot.cu"),
        dir.path().join("cbe_dot.cu"),
    )
    .unwrap();
    std::fs::write(dir.path().join("dot.toml"), CBE_DOT).unwrap();
    let run = |args: &[&str]| {
        let mut c = Command::new(BIN);
        let tools = root.join(".tools").join("cuda");
        if std::env::var_os("FENCEHOUND_TOOLS_DIR").is_none() && tools.exists() {
            c.env("FENCEHOUND_TOOLS_DIR", tools);
        }
        let o = c
            .args(args)
            .current_dir(dir.path())
            .env("FENCEHOUND_CACHE_DIR", cache.path())
            .stdin(Stdio::null())
            .output()
            .expect("run fencehound");
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        o
    };
    run(&["fuzz", "dot.toml", "--race", "--report", "night.json", "-q"]);
    let min = run(&[
        "minimize",
        "dot.toml",
        "--variant",
        "no_fence",
        "--batch",
        "5",
        "--confirm",
        "5",
        "--json",
    ]);
    std::fs::write(dir.path().join("min.json"), &min.stdout).unwrap();
    run(&[
        "report",
        "night.json",
        "-o",
        "night.html",
        "--minimize",
        "min.json",
    ]);
    let page = dir.path().join("night.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: no reference that a browser would fetch.
    for bad in [
        "src=\"http",
        "href=\"http",
        "url(http",
        "@import",
        "<script",
    ] {
        assert!(!html.contains(bad), "the page contains `{bad}`");
    }

    let d = Driver::start(driver);
    let profile = tempfile::tempdir().expect("temp dir");
    let sid = session(&d, chromium, profile.path());

    // Control: the log does catch a console error on a page that makes one.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head><body><script>console.error('control error')</script></body></html>",
    )
    .unwrap();
    open(&d, &sid, &control);
    let errs = console_errors(&d, &sid);
    assert!(
        errs.iter().any(|e| e.contains("control error")),
        "the console log does not show errors: {errs:?}"
    );

    open(&d, &sid, &page);
    let state = script(
        &d,
        &sid,
        r#"
        const plots = [...document.querySelectorAll('figure.rate-plot')];
        return {
          ready: document.readyState,
          title: document.title,
          variants: plots.map(f => f.dataset.variant),
          sizes: plots.map(f => { const s = f.querySelector('svg'); if (!s) return [0, 0];
                                  const r = s.getBoundingClientRect(); return [r.width, r.height]; }),
          lines: plots.map(f => f.querySelectorAll('svg polyline, svg path, svg line').length),
          flush: document.querySelectorAll('figure.flush-plot svg').length,
          resources: performance.getEntriesByType('resource').map(e => e.name),
          excerpts: document.querySelectorAll('figure.excerpt mark').length,
        };
        "#,
    );
    let errs = console_errors(&d, &sid);
    let _ = d.try_request("DELETE", &format!("/session/{sid}"), None);
    assert!(errs.is_empty(), "console errors: {errs:?}");
    assert_eq!(state["ready"], "complete");
    assert_eq!(state["title"], "fencehound: dot");
    assert_eq!(
        state["variants"],
        json!(["two_fences", "no_fence", "block_fence"]),
        "{state}"
    );
    for (i, s) in state["sizes"].as_array().unwrap().iter().enumerate() {
        let (w, h) = (s[0].as_f64().unwrap(), s[1].as_f64().unwrap());
        assert!(w > 100.0 && h > 100.0, "plot {i} is {w}x{h}");
        assert!(state["lines"][i].as_u64().unwrap() > 0, "plot {i} is empty");
    }
    assert_eq!(state["flush"], 3, "{state}");
    assert_eq!(state["resources"], json!([]), "the page fetched something");
    // Races and the missing fence, each with its source line marked.
    assert!(state["excerpts"].as_u64().unwrap() >= 2, "{state}");
}
