//! Error types of the core crate. Messages are written for the person who
//! typed the option: they name the option, the value and what to do.

use thiserror::Error;

/// A job could not be validated.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum JobError {
    /// An option iolab does not know (or does not support yet).
    #[error("unknown option '{name}'{hint}")]
    UnknownOption { name: String, hint: String },
    /// A known option with a value that cannot be parsed or is out of range.
    #[error("invalid value '{value}' for option '{option}': {reason}")]
    InvalidValue {
        option: String,
        value: String,
        reason: String,
    },
    /// A known option that needs a value and got none (or a flag given a value).
    #[error("option '{option}' {reason}")]
    BadForm { option: String, reason: String },
    /// Options that contradict each other.
    #[error("{0}")]
    Conflict(String),
}

/// Errors of the core crate other than job validation (result decoding, I/O on /proc).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CoreError {
    #[error(transparent)]
    Job(#[from] JobError),
    #[error("histogram: {0}")]
    Histogram(String),
    #[error("result format: {0}")]
    Format(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
