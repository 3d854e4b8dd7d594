//! The gated test attributes, used through `tb-test-support` (see there). Dev-only.
//!
//! `#[data_test]` and `#[shared_test]` add `#[ignore = "..."]` to the test they mark when this
//! crate's build script found no data (outside CI only); `#[reference_test]` does when it found
//! no checkouts of the reference's code (in CI too), `#[adapter_test]` when it found no checkout
//! of the OpenEnv adapter's client (in CI too), `#[adapter_eval_test]` when it found no install of
//! the adapter's evaluator (in CI too). `#[needs(tmux)]` (and the other programs and Python
//! environments of `lookup::Need`) does when the build script did not find what it names
//! (outside CI only). Otherwise they return the test unchanged.
//! No dependencies: the item is not parsed, only its leading attributes are walked.

#[path = "../../tb-test-support/src/lookup.rs"]
mod lookup;

use proc_macro::{Delimiter, TokenStream, TokenTree};

const NO_DATA: &str = "benchmark data not found when the tests were built; set THINKINGBOX_DATA or TB_SHARED and rebuild (CI fails instead)";
const NO_SHARED: &str = "the shared folder (thinkingbox-data, tb-bench-v1) was not found when the tests were built; set TB_SHARED and rebuild (CI fails instead)";
const NO_REFERENCE: &str = "needs the reference's code: checkouts of microsoft/thinkingbox (at THINKINGBOX_FRAMEWORK) and of microsoft/thinkingbox-data with its servers (at THINKINGBOX_REFERENCE_DATA), or both under ~/.cache/thinkingbox-rs/reference/ (see CONTRIBUTING.md); set them and rebuild";

const NO_ADAPTER: &str = "needs the OpenEnv ThinkingBox adapter's client: a checkout of meta-pytorch/OpenEnv envs/thinkingbox_env (the folder holding thinkingbox_env/, at TB_OPENENV_ADAPTER) and a Python with openenv 0.4.1 (at TB_OPENENV_ADAPTER_PYTHON), or both under ~/.cache/thinkingbox-rs/ (openenv-adapter/envs, openenv-venv); set them and rebuild";

/// Marks a test that needs the OpenEnv ThinkingBox adapter's client
/// (`tb_test_support::adapter()`): ignored wherever it is not found, CI included.
#[proc_macro_attribute]
pub fn adapter_test(attr: TokenStream, item: TokenStream) -> TokenStream {
    mark(attr, item, cfg!(tb_no_adapter), NO_ADAPTER)
}

const NO_ADAPTER_EVAL: &str = "needs the OpenEnv ThinkingBox adapter's evaluator: thinkingbox-eval installed with the reference's ThinkingBox runtime (at TB_OPENENV_EVAL, or ~/.cache/thinkingbox-rs/openenv-eval-venv/bin/thinkingbox-eval); set it and rebuild";

/// Marks a test that needs the OpenEnv ThinkingBox adapter's evaluator
/// (`tb_test_support::adapter_eval()`): ignored wherever it is not found, CI included.
#[proc_macro_attribute]
pub fn adapter_eval_test(attr: TokenStream, item: TokenStream) -> TokenStream {
    mark(attr, item, cfg!(tb_no_adapter_eval), NO_ADAPTER_EVAL)
}

/// Marks a test that needs a thinkingbox-data checkout (`tb_test_support::data()`).
#[proc_macro_attribute]
pub fn data_test(attr: TokenStream, item: TokenStream) -> TokenStream {
    mark(attr, item, cfg!(tb_no_data), NO_DATA)
}

/// Marks a test that needs the whole shared folder (`tb_test_support::shared()`).
#[proc_macro_attribute]
pub fn shared_test(attr: TokenStream, item: TokenStream) -> TokenStream {
    mark(attr, item, cfg!(tb_no_shared), NO_SHARED)
}

/// Marks a test that needs the reference's code checkouts (`tb_test_support::framework()`,
/// `tb_test_support::reference_data()`): ignored wherever they are not found, CI included.
#[proc_macro_attribute]
pub fn reference_test(attr: TokenStream, item: TokenStream) -> TokenStream {
    mark(attr, item, cfg!(tb_no_reference), NO_REFERENCE)
}

/// Marks a test that drives a program or a Python environment of the machine:
/// `#[needs(tmux)]`, `#[needs(slurm, python_mcp)]`; the names are those of `lookup::Need`
/// (`tb_test_support::Need`). Outside CI, a test whose need was not found when the tests were
/// built is ignored with what is missing and how to get it; in CI it runs (and fails).
#[proc_macro_attribute]
pub fn needs(attr: TokenStream, item: TokenStream) -> TokenStream {
    let missing = env!("TB_TEST_MISSING");
    let mut reasons = Vec::new();
    for tree in attr {
        match tree {
            TokenTree::Punct(p) if p.as_char() == ',' => {}
            TokenTree::Ident(i) => {
                let name = i.to_string();
                let Some(need) = lookup::Need::by_name(&name) else {
                    let known: Vec<&str> = lookup::Need::ALL.iter().map(|n| n.name()).collect();
                    return format!(
                        "compile_error!({:?});",
                        format!("unknown need `{name}` (known: {})", known.join(", "))
                    )
                    .parse()
                    .unwrap_or_default();
                };
                if missing.split(',').any(|m| m == name) {
                    reasons.push(need.how());
                }
            }
            _ => {
                return r##"compile_error!("#[needs] takes need names separated by commas, e.g. #[needs(tmux)]");"##
                    .parse()
                    .unwrap_or_default();
            }
        }
    }
    if reasons.is_empty() {
        return item;
    }
    let reason = format!(
        "{}; then rebuild the tests (touch crates/tb-test-support/src/lookup.rs); CI fails instead",
        reasons.join("; ")
    );
    mark(TokenStream::new(), item, true, &reason)
}

fn mark(attr: TokenStream, item: TokenStream, ignore: bool, reason: &str) -> TokenStream {
    if !attr.is_empty() {
        return r#"compile_error!("the data-gated test attributes take no arguments");"#
            .parse()
            .unwrap_or_default();
    }
    if !ignore {
        return item;
    }
    // After the item's own attributes (`#[test]`, `#[tokio::test]`, docs), so that attribute
    // macros such as `tokio::test` see and keep it.
    // Gates stack (`#[shared_test] #[reference_test]`): the first one that ignores wins, since
    // libtest takes one `#[ignore]`. A gate that ignores replaces a slow test's own
    // `#[ignore = "slow: ..."]`: what is missing is the reason that matters, and CI runs the
    // slow tests with `--ignored`.
    let mut tokens: Vec<TokenTree> = item.into_iter().collect();
    let mut i = 0;
    while let (Some(TokenTree::Punct(p)), Some(TokenTree::Group(g))) =
        (tokens.get(i), tokens.get(i + 1))
    {
        if p.as_char() != '#' || g.delimiter() != Delimiter::Bracket {
            break;
        }
        if is_ignore(g) {
            if !is_slow(g) {
                return tokens.into_iter().collect();
            }
            tokens.drain(i..i + 2);
            continue;
        }
        i += 2;
    }
    let ignore_attr: TokenStream = format!("#[ignore = {reason:?}]")
        .parse()
        .unwrap_or_default();
    let mut out = TokenStream::new();
    out.extend(tokens.iter().take(i).cloned());
    out.extend(ignore_attr);
    out.extend(tokens.iter().skip(i).cloned());
    out
}

/// Whether an attribute's bracket group is `ignore` or `ignore = "..."`.
fn is_ignore(group: &proc_macro::Group) -> bool {
    matches!(group.stream().into_iter().next(), Some(TokenTree::Ident(i)) if i.to_string() == "ignore")
}

/// Whether an `ignore` attribute's reason starts with `slow:`.
fn is_slow(group: &proc_macro::Group) -> bool {
    group
        .stream()
        .into_iter()
        .any(|t| matches!(t, TokenTree::Literal(l) if l.to_string().starts_with("\"slow:")))
}
