//! The target's error type. Messages name what is wrong (the config key,
//! the export, the address) and say what to do; the CLI prints them as one
//! line.

use thiserror::Error;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TargetError {
    /// A stack or server setting is wrong; `key` is its path in the config,
    /// e.g. `export[1] (disk1).layers[0] (delay).read`.
    #[error("{key}: {msg}")]
    Config { key: String, msg: String },
    /// The config file cannot be read or is not TOML.
    #[error("{path}: {msg}")]
    ConfigFile { path: String, msg: String },
    /// An export cannot be served as built.
    #[error("export '{name}': {msg}")]
    Export { name: String, msg: String },
    /// The listening socket cannot be set up.
    #[error("{0}")]
    Listen(String),
    /// An OS error outside any request (accept, thread creation, /proc).
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// Flushing an export at shutdown failed: data may not be on stable storage.
    #[error("flush of export '{export}' at shutdown failed: {msg}")]
    Flush { export: String, msg: String },
}

impl TargetError {
    pub fn config(key: impl Into<String>, msg: impl Into<String>) -> TargetError {
        TargetError::Config {
            key: key.into(),
            msg: msg.into(),
        }
    }

    pub fn io(what: impl Into<String>, source: std::io::Error) -> TargetError {
        TargetError::Io {
            what: what.into(),
            source,
        }
    }
}
