//! Shared data types of thinkingbox-rs. No IO lives here.

pub mod task;

pub use task::{Check, SourceLoc, Task};
