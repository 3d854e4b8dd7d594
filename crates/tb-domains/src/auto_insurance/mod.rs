//! The `sandbox_auto_insurance` server: its tables, its zendesk variant and its own tools
//! (one file per toolset of the reference: policy, billing, claims, crm, lookup, knowledge_base).

use serde_json::Value;
use sha2::{Digest, Sha256};
use tb_sandbox::state::Row;
use tb_sandbox::{Domain, DomainError, Session, ToolError, Tools};

pub mod billing;
pub mod claims;
pub mod crm;
pub mod lookup;
pub mod policy;
pub mod tables;

/// The server name.
pub const SERVER: &str = "sandbox_auto_insurance";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Tools {
    let mut t = Tools::new();
    policy::register(&mut t);
    billing::register(&mut t);
    claims::register(&mut t);
    crm::register(&mut t);
    lookup::register(&mut t);
    t.add("knowledge_base_search_policy", crate::policy::search_policy);
    t
}

/// Builds the domain.
pub fn domain() -> Result<Domain, DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/sandbox_auto_insurance.tables"),
        crate::zendesk::Variant::AutoInsurance,
        include_str!("../../tools/sandbox_auto_insurance.tools"),
        functions(),
    )
}

/// `PREFIX` + the first `n` hex digits, upper-case, of sha256(`seed`): the reference's
/// deterministic ids for created records.
pub(crate) fn hash_id(prefix: &str, seed: &str, n: usize) -> String {
    let hex: String = Sha256::digest(seed.as_bytes())
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect();
    format!("{prefix}{}", hex.get(..n).unwrap_or(&hex))
}

/// A copy of the first row whose `field` equals the string `value`.
pub(crate) fn find_row(
    s: &Session,
    table: &str,
    field: &str,
    value: &str,
) -> Result<Option<Row>, ToolError> {
    Ok(s.state
        .find_by(table, field, &Value::String(value.to_string()))?
        .cloned())
}

pub(crate) use tb_sandbox::tool::out;

#[cfg(test)]
pub(crate) mod testutil {
    //! Sessions on hand-made rows for the unit tests (no benchmark data needed).

    use serde_json::{Value, json};
    use std::sync::Arc;
    use tb_sandbox::state::State;
    use tb_sandbox::{Clock, Loaded, Session};

    /// A session whose state is exactly `patch` (`{table: [rows]}`) over empty tables.
    pub fn session(patch: Value) -> Session {
        let domain = Arc::new(super::domain().expect("domain builds"));
        let loaded = Loaded {
            base: State::empty(domain.layout().clone()),
            domain,
        };
        loaded
            .session(&json!({"data_patch": patch}), Clock::default())
            .expect("patch applies")
    }

    /// A small book: one CA policy with a vehicle, a driver, a billing account, a customer and a claim.
    pub fn book() -> Value {
        json!({
            "policy_policies": [{
                "id": "POL-1", "customer_id": "CUS-1", "state": "CA", "status": "Cancelled for Non-Payment",
                "effective_date": "2025-01-01", "expiration_date": "2026-01-01", "renewal_date": "2026-01-01",
                "cancellation_date": "2025-06-01", "cancellation_reason": "Non-Payment", "named_insured_id": "CUS-1"
            }],
            "policy_vehicles": [{
                "id": "VEH-1", "policy_id": "POL-1", "vin": "1HGCM82633A123456", "year": 2020, "make": "Honda",
                "model": "Accord", "effective_date": "2025-01-01", "date_added_to_policy": "2025-01-01"
            }],
            "policy_drivers": [{
                "id": "DRV-1", "policy_id": "POL-1", "customer_id": "CUS-1", "name": "Ann Lee", "date_of_birth": "1980-02-03",
                "relationship": "Self", "effective_date": "2025-01-01", "is_named_insured": true
            }],
            "billing_billing_accounts": [{
                "id": "BA-1", "policy_id": "POL-1", "customer_id": "CUS-1", "status": "Past Due", "monthly_payment": 12000,
                "past_due_amount": 24000, "current_due_date": "2025-06-01", "arrangements_12_months": 1
            }],
            "crm_customers": [{
                "id": "CUS-1", "email": "Ann.Lee@example.com", "first_name": "Ann", "last_name": "Lee",
                "date_of_birth": "1980-02-03", "ssn_last_4": "1234", "security_question": "Pet?", "security_answer": "Fluffy"
            }],
            "claims_claims": [{
                "id": "CLM-1000000001", "policy_id": "POL-1", "vehicle_id": "VEH-1", "driver_id": "DRV-1",
                "date_of_loss": "2025-03-01", "loss_location": "LA", "claim_type": "Liability Only",
                "claim_stage": "Open – Investigation", "severity": "Major", "created_date": "2025-03-02"
            }]
        })
    }

    /// The error text of a call, or a panic with the unexpected success.
    pub fn err(s: &mut Session, tool: &str, args: Value) -> String {
        match s.call(tool, &args).to_json(tool).get("error") {
            Some(Value::String(e)) => e.clone(),
            other => panic!("{tool} should fail, got {other:?}"),
        }
    }

    /// The result of a successful call.
    pub fn ok(s: &mut Session, tool: &str, args: Value) -> Value {
        let out = s.call(tool, &args);
        assert!(out.is_ok(), "{tool} failed: {out:?}");
        out.to_json(tool)
    }
}

#[cfg(test)]
mod tests;
