//! The tool servers a task's agent calls, as the reference's servers answer them: the five
//! ThinkingBox-Bench v1 domains (table definitions in `tables/<server>.tables`, tool
//! declarations in `tools/*.tools` with our descriptions, small tool functions on the shared
//! runtime of `tb-sandbox`), and the servers with their own state and texts ([`own_servers`]:
//! the airline and the setup-check servers).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use tb_sandbox::{Domain, DomainError, Tools};

#[cfg(test)]
#[macro_use]
mod testdata;
pub mod airline;
pub mod auto_insurance;
pub mod booking;
pub mod consulting;
#[cfg(test)]
mod fuzz_tests;
pub mod neobank;
pub mod own_servers;
pub mod policy;
pub mod pydantic;
pub mod retail;
pub mod setup_check;
pub mod shape;
mod vocab;
pub mod zendesk;

/// The server names of the v1 domains, in the order the benchmark lists them.
pub const SERVERS: [&str; 5] = [
    "sandbox_external_retail",
    "external_booking_v1",
    "sandbox_auto_insurance",
    "sandbox_neobank_support_v1",
    "sandbox_consulting",
];

/// The line in a domain's tools text where the zendesk toolkit's tools are listed.
const ZENDESK_MARKER: &str = "# @zendesk";

/// Builds a domain from its table text, the zendesk toolkit of its variant and its own tools.
pub(crate) fn build(
    server: &str,
    tables: &'static str,
    zendesk: zendesk::Variant,
    tools: &'static str,
    functions: Tools,
) -> Result<Domain, DomainError> {
    let (zd_text, mut fns) = zendesk::toolkit(zendesk);
    fns.extend(functions);
    // The zendesk tools are listed where the domain's text has a `# @zendesk` line (the
    // reference's listing order), else first.
    let (before, after) = match tools.find(ZENDESK_MARKER) {
        Some(i) => (&tools[..i], &tools[i..]),
        None => ("", tools),
    };
    Domain::new(
        server,
        &[
            (&format!("{server}.tables"), tables),
            (&format!("{server}.tools"), before),
            (&format!("zendesk/{zendesk:?}.tools"), zd_text),
            (&format!("{server}.tools (after zendesk)"), after),
        ],
        fns,
    )
}

/// Every domain as declared (tables, tools, our tool list from the declarations), built once.
fn declared_registry() -> &'static Result<Vec<Arc<Domain>>, String> {
    static REG: OnceLock<Result<Vec<Arc<Domain>>, String>> = OnceLock::new();
    REG.get_or_init(|| {
        let built = [
            retail::domain(),
            booking::domain(),
            auto_insurance::domain(),
            neobank::domain(),
            consulting::domain(),
        ];
        built
            .into_iter()
            .map(|d| d.map(Arc::new).map_err(|e| e.to_string()))
            .collect()
    })
}

fn registry() -> &'static Result<Vec<Arc<Domain>>, String> {
    static REG: OnceLock<Result<Vec<Arc<Domain>>, String>> = OnceLock::new();
    REG.get_or_init(|| {
        let declared = declared_registry().as_ref().map_err(Clone::clone)?;
        // listed with our words in the reference's order and schema structure
        declared
            .iter()
            .map(|d| shape::shaped(d).map(Arc::new).map_err(|e| e.to_string()))
            .collect()
    })
}

/// Every domain as declared, before [`shape::shaped`] gives it our surface (same tables and
/// tools as [`all`], in the same order; its tool list is the plain one from the declarations).
/// For a caller that replaces the tool list anyway (the reference surface): it does not pay
/// for shaping our surface.
pub fn declared() -> Result<&'static [Arc<Domain>], DomainError> {
    declared_registry()
        .as_deref()
        .map_err(|m| DomainError::Tools {
            domain: "registry".into(),
            message: m.clone(),
        })
}

/// Every domain. Fails only if a domain's own definition is broken (a bug, caught by tests).
pub fn all() -> Result<&'static [Arc<Domain>], DomainError> {
    registry().as_deref().map_err(|m| DomainError::Tools {
        domain: "registry".into(),
        message: m.clone(),
    })
}

/// A domain by server name.
pub fn by_name(server: &str) -> Result<Option<Arc<Domain>>, DomainError> {
    Ok(all()?.iter().find(|d| d.name == server).cloned())
}

/// The toolslib folder under a data root (where `<toolset>/initial_data/*.json` live).
pub fn toolslib(data_root: &Path) -> PathBuf {
    data_root.join("servers/tb_business_ops_servers_202606/tb_business_ops_servers_202606/toolslib")
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_domain_builds() {
        let all = super::all().unwrap();
        assert_eq!(all.len(), 5);
    }
}
