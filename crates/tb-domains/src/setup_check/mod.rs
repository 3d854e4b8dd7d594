//! The setup-check servers of `thinkingbox_tools` that the data repository's "verify your
//! setup" test files run on: `online_banking` (accounts, payees, transfers, scheduled bills),
//! `email_system` (mailboxes, contacts, profiles) and `ms_store` (three fixed texts, read at
//! run time from the checkout's server source).
//!
//! Result texts as the servers send them: `online_banking` is a fastmcp server (compact JSON
//! of the success object, `"status": "ok"` first; domain errors `"Error!\n<message>"`;
//! invalid arguments an MCP error with pydantic's text for `call[<tool>]`); `email_system` and
//! `ms_store` are MCP-SDK servers (`json.dumps` with the default separators; invalid arguments
//! an MCP error `Error executing tool <name>: ` + pydantic's text for `<function>Arguments`).
//! Both texts come from [`crate::pydantic`]. The clock (transfer timestamps, a bill without a
//! date, e-mail times) is the session clock; the host time zone is taken as UTC (the recorded
//! runs pinned `TZ=UTC`).
//!
//! Arguments and rows are read with the shared tool vocabulary ([`tb_sandbox::Fields`]), and
//! the tools are registered as the v1 domains' are ([`tb_sandbox::Tools`], on the server's own
//! state; failures are [`tb_sandbox::ToolError`]s shown by
//! [`tb_sandbox::ToolError::bang_text`]); the servers are [`crate::own_servers::OwnServer`]s
//! (their texts and argument errors are not the v1 servers' shape).

mod banking;
mod email;
mod ms_store;

pub use banking::{BANKING, Banking};
pub use email::{EMAIL, Email};
pub use ms_store::{MS_STORE, MS_STORE_SOURCE, MsStore};

/// A server's tool function, listed beside each tool's declaration.
type ToolFnPtr<S> = fn(&mut S, &tb_sandbox::Args) -> tb_sandbox::ToolResult;

/// A server's tool: name, description, parameters (each a name and what the server checks of
/// it), function.
type Decl<S, P> = (&'static str, &'static str, &'static Params<P>, ToolFnPtr<S>);

/// A tool's parameters: each a name and what the server checks of it.
type Params<P> = [(&'static str, P)];

/// A server's tool functions registered from its declarations, in their order (so every
/// declared tool has exactly its one function).
fn register<S: 'static, P>(decls: &[Decl<S, P>]) -> tb_sandbox::Tools<S> {
    let mut t = tb_sandbox::Tools::new();
    for (name, _, _, f) in decls {
        t.add(name, *f);
    }
    t
}

/// A tool's declared parameters and its registered function, if the server has the tool.
fn declared<'a, S: 'static, P>(
    decls: &'a [Decl<S, P>],
    tools: &'a tb_sandbox::Tools<S>,
    name: &str,
) -> Option<(&'a Params<P>, &'a tb_sandbox::ToolFn<S>)> {
    let (_, _, params, _) = decls.iter().find(|(n, ..)| *n == name)?;
    Some((params, tools.get(name)?))
}

/// A parameter's schema title, as pydantic makes it from the name (`account_number` ->
/// `Account Number`).
fn title(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
