//! The PTX cache: compiled PTX keyed by a SHA-256 of everything NVRTC saw.
//!
//! The key covers the source text, the file name (it appears in `.file` directives), every
//! option passed to NVRTC (architecture, `-D` defines, `-I` include directories) and the
//! NVRTC version. It does *not* cover the contents of `#include`d headers: editing a header
//! without touching the including file gives a stale hit. Delete the cache directory (or
//! point `FENCEHOUND_CACHE_DIR` elsewhere) after editing headers.
//!
//! Entries are written to a temporary file in the cache directory and renamed into place,
//! so readers never see half an entry. An entry that cannot be read or fails its checksum is
//! treated as a miss and overwritten; the cache never makes a compilation fail.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const MAGIC: &str = "fencehound-ptx-cache 1";

/// A directory of cached PTX.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxCache {
    dir: PathBuf,
}

/// A cached compilation result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEntry {
    pub ptx: String,
    pub log: String,
}

impl PtxCache {
    /// A cache in `dir` (created on first store).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        PtxCache { dir: dir.into() }
    }

    /// The default cache: `$FENCEHOUND_CACHE_DIR`, else `$XDG_CACHE_HOME/fencehound/ptx`,
    /// else `~/.cache/fencehound/ptx`. `None` when none of these can be determined.
    pub fn from_env() -> Option<Self> {
        let env = |v: &str| {
            std::env::var_os(v)
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
        };
        if let Some(d) = env("FENCEHOUND_CACHE_DIR") {
            return Some(Self::at(d));
        }
        if let Some(d) = env("XDG_CACHE_HOME") {
            return Some(Self::at(d.join("fencehound").join("ptx")));
        }
        env("HOME").map(|h| Self::at(h.join(".cache").join("fencehound").join("ptx")))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key for one compilation.
    pub fn key(
        source: &str,
        file_name: &str,
        options: &[String],
        nvrtc_version: (i32, i32),
    ) -> String {
        let mut h = Sha256::new();
        // Length-prefix every field so that no two different inputs hash the same bytes.
        let mut field = |bytes: &[u8]| {
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(MAGIC.as_bytes());
        field(format!("nvrtc {}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
        field(file_name.as_bytes());
        field(source.as_bytes());
        for o in options {
            field(o.as_bytes());
        }
        hex(&h.finalize())
    }

    fn entry_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.ptx"))
    }

    /// The entry for `key`, or `None` on a miss or a damaged entry.
    pub fn load(&self, key: &str) -> Option<CacheEntry> {
        let text = std::fs::read_to_string(self.entry_path(key)).ok()?;
        decode(&text)
    }

    /// Stores an entry. Failures (read-only disk, full disk, ...) are returned for the
    /// caller to ignore or report; they never affect the compilation result.
    pub fn store(&self, key: &str, entry: &CacheEntry) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(&self.dir)?;
        tmp.write_all(encode(entry).as_bytes())?;
        tmp.as_file().sync_all()?;
        tmp.persist(self.entry_path(key)).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Entry format: a header naming the checksum and the log length, then the log, then the PTX.
fn encode(entry: &CacheEntry) -> String {
    let body = format!("{}{}", entry.log, entry.ptx);
    format!(
        "{MAGIC}\nsha256 {}\nlog-bytes {}\n{body}",
        hex(&Sha256::digest(body.as_bytes())),
        entry.log.len()
    )
}

fn decode(text: &str) -> Option<CacheEntry> {
    let rest = text.strip_prefix(MAGIC)?.strip_prefix('\n')?;
    let (sum_line, rest) = rest.split_once('\n')?;
    let (log_line, body) = rest.split_once('\n')?;
    let sum = sum_line.strip_prefix("sha256 ")?;
    let log_len: usize = log_line.strip_prefix("log-bytes ")?.parse().ok()?;
    if hex(&Sha256::digest(body.as_bytes())) != sum || !body.is_char_boundary(log_len) {
        return None;
    }
    let (log, ptx) = body.split_at(log_len);
    Some(CacheEntry {
        ptx: ptx.to_string(),
        log: log.to_string(),
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let dir = tempfile::tempdir().unwrap();
        let cache = PtxCache::at(dir.path().join("ptx"));
        let key = PtxCache::key("src", "k.cu", &["-lineinfo".into()], (13, 5));
        assert!(cache.load(&key).is_none());
        let entry = CacheEntry {
            ptx: "// ptx\n.version 9.0\n".into(),
            log: "warning: x\n".into(),
        };
        cache.store(&key, &entry).unwrap();
        assert_eq!(cache.load(&key), Some(entry.clone()));

        // A truncated or edited entry is a miss, not an error.
        let path = cache.entry_path(&key);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, &text[..text.len() - 3]).unwrap();
        assert!(cache.load(&key).is_none());
        std::fs::write(&path, b"\xff\xfe garbage").unwrap();
        assert!(cache.load(&key).is_none());
        // ... and storing again repairs it.
        cache.store(&key, &entry).unwrap();
        assert_eq!(cache.load(&key), Some(entry));
    }

    #[test]
    fn key_depends_on_every_input() {
        let base = PtxCache::key("s", "k.cu", &["-I/a".into()], (13, 5));
        assert_ne!(base, PtxCache::key("s2", "k.cu", &["-I/a".into()], (13, 5)));
        assert_ne!(base, PtxCache::key("s", "j.cu", &["-I/a".into()], (13, 5)));
        assert_ne!(base, PtxCache::key("s", "k.cu", &["-I/b".into()], (13, 5)));
        assert_ne!(base, PtxCache::key("s", "k.cu", &["-I/a".into()], (13, 4)));
        // Field boundaries matter: ("ab", "c") is not ("a", "bc").
        assert_ne!(
            PtxCache::key("ab", "c", &[], (13, 5)),
            PtxCache::key("a", "bc", &[], (13, 5))
        );
    }
}
