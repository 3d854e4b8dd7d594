//! Sessions, episodes, judges, offline agents, and replay of recorded reference traces.

pub mod replay;
