//! tb-eval's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod airline_episodes;
mod airline_replay;
mod campaign_order;
mod common;
mod llm_episode;
mod offline_agents;
mod parity_auto_insurance;
mod parity_booking;
mod parity_consulting;
mod parity_neobank;
mod parity_retail;
mod parity_zendesk;
mod prepared_sessions;
mod python_bodies;
mod setup_check_episodes;
mod state_vectors;
mod surface_cache;
