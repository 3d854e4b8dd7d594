//! Error paths and variant rules of the zendesk tools, on the real initial data.

use crate::testdata::call;
use serde_json::{Value, json};
use tb_sandbox::{Clock, Session};

fn session(server: &str) -> Session {
    crate::testdata::session(server, json!({}), Clock::default())
}

/// `zendesk_create_item` of `item` in `table`.
fn create(s: &mut Session, table: &str, item: Value) -> Value {
    let args = json!({"table": table, "item": item});
    call(s, "zendesk_create_item", args)
}

/// `zendesk_create_item` of a ticket.
fn create_ticket(s: &mut Session, item: Value) -> Value {
    create(s, "tickets", item)
}

/// `zendesk_update_item` of ticket `id` with `item`.
fn update_ticket(s: &mut Session, id: &str, item: Value) -> Value {
    let args = json!({"table": "tickets", "id": id, "item": item});
    call(s, "zendesk_update_item", args)
}

fn err(v: &Value) -> &str {
    v.get("error")
        .and_then(Value::as_str)
        .unwrap_or("<no error>")
}

#[test]
fn every_variant_declares_the_seven_tools_in_order() {
    for v in super::VARIANTS {
        let (text, fns) = super::toolkit(v);
        let doc = tb_sandbox::schema::parse(&[("z", text)]).unwrap();
        let names: Vec<&str> = doc.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "zendesk_create_item",
                "zendesk_delete_item",
                "zendesk_get_item",
                "zendesk_get_items",
                "zendesk_get_tables",
                "zendesk_search_articles",
                "zendesk_update_item"
            ]
        );
        assert_eq!(fns.len(), 7);
    }
}

#[tb_test_support::data_test]
#[test]
fn unsupported_and_unknown() {
    let mut s = session("sandbox_external_retail");
    calls!(s;
        "zendesk_get_items" {"table": "views"} => error "Tool execution failed: Unsupported table: 'views'. Only tickets, users, organizations, comments, and ticket_comments are supported.";
        "zendesk_get_item" {"table": "tickets", "id": "999"} => error "Tool execution failed: Item with ID '999' not found in table 'TableName.TICKETS'";
        "zendesk_delete_item" {"table": "users", "id": "nope"} => error "Tool execution failed: Item with ID 'nope' not found in table 'TableName.USERS'";
        "zendesk_update_item" {"table": "tickets", "id": "999", "item": {"status": "open"}} => error "Tool execution failed: Item with ID '999' not found in table 'tickets'";
        "zendesk_update_item" {"table": "ticket_comments", "id": "1", "item": {}} => error "Tool execution failed: The value is not updatable. Ticket comments cannot be modified.";
        "zendesk_delete_item" {"table": "ticket_comments", "id": "1"} => error "Tool execution failed: The value is not updatable. Ticket comments cannot be deleted.";
    );
    let r = call(
        &mut s,
        "zendesk_get_item",
        json!({"table": "bogus", "id": "1"}),
    );
    assert!(
        err(&r).starts_with(
            "Tool execution failed: Input validation failed: table: Input should be 'activities', "
        ),
        "{r}"
    );
}

#[tb_test_support::data_test]
#[test]
fn input_validation_of_the_item_union() {
    let mut s = session("sandbox_external_retail");
    let r = create_ticket(&mut s, json!({"subject": "x", "status": "bogus"}));
    assert!(err(&r).contains("item.TicketCreateInput.status: Input should be 'new', 'open', 'pending', 'hold', 'solved' or 'closed'"), "{r}");
    calls!(s;
        "zendesk_create_item" {"table": "tickets"} => error "Tool execution failed: Input validation failed: item: Field required";
    );
    // Unknown keys are ignored (no input model forbids extras).
    let r = call(
        &mut s,
        "zendesk_create_item",
        json!({"table": "tickets", "item": {"subject": "x", "status": "open", "color": "red"}, "extra": 1}),
    );
    assert_eq!(r["item"]["subject"], "x", "{r}");
    assert!(r["item"].get("color").is_none());
}

#[tb_test_support::data_test]
#[test]
fn create_ids_timestamps_and_null_handling() {
    let mut s = session("sandbox_external_retail");
    let n = s.state.count("zendesk_tickets").unwrap();
    let r = create_ticket(&mut s, json!({"subject": "x", "tags": null}));
    assert_eq!(r["item"]["id"], json!((n + 1).to_string()), "{r}");
    assert_eq!(r["item"]["tags"], json!([]));
    assert_eq!(r["item"]["status"], "new");
    assert_eq!(r["item"]["created_at"], "2025-10-01T13:00:05Z");
    // An explicit null for a field the row requires fails the row model.
    let r = create_ticket(&mut s, json!({"subject": "x", "status": null}));
    assert!(
        err(&r).starts_with("Tool execution failed: Failed to create item: 1 validation error for Ticket\nstatus\n  Input should be 'new', 'open', 'pending', 'hold', 'solved' or 'closed' [type=enum, input_value=None, input_type=NoneType]"),
        "{r}"
    );
    // A user-shaped item for the tickets table misses the subject.
    let r = create_ticket(&mut s, json!({"name": "A", "email": "a@b"}));
    assert!(err(&r).contains("validation error for Ticket\nsubject\n  Field required [type=missing, input_value={'name': 'A'"), "{r}");
    // ticket_comments: numeric ids, key and generated html_body.
    let c = i64::try_from(s.state.count("zendesk_ticket_comments").unwrap()).unwrap();
    let r = create(
        &mut s,
        "ticket_comments",
        json!({"ticket_id": 1, "author_id": 2, "body": "hi"}),
    );
    assert_eq!(r["item"]["id"], json!(23118465221916 + c), "{r}");
    assert_eq!(r["item"]["key"], json!((23118465221916 + c).to_string()));
    assert_eq!(
        r["item"]["html_body"],
        "<div class=\"zd-comment\" dir=\"auto\"><p dir=\"auto\">hi</p></div>"
    );
}

#[tb_test_support::data_test]
#[test]
fn duplicate_create_after_delete() {
    let mut s = session("sandbox_external_retail");
    let n = s.state.count("zendesk_users").unwrap();
    assert!(n >= 2);
    let first = s.state.rows("zendesk_users").unwrap()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    calls!(s;
        "zendesk_delete_item" {"table": "users", "id": first} => {"success": true};
    );
    // The count-based id now equals the last existing id.
    let r = create(&mut s, "users", json!({"name": "A", "email": "a@b"}));
    let last = s.state.rows("zendesk_users").unwrap().last().unwrap()["id"].clone();
    if last == json!(n.to_string()) {
        assert_eq!(
            err(&r),
            format!("Tool execution failed: Object with ID {n} already exists")
        );
    }
}

#[tb_test_support::data_test]
#[test]
fn update_merges_sent_fields() {
    let mut s = session("sandbox_external_retail");
    let id = s.state.rows("zendesk_tickets").unwrap()[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = update_ticket(&mut s, &id, json!({"tags": ["a"], "status": "pending"}));
    assert_eq!(r["item"]["tags"], json!(["a"]), "{r}");
    assert_eq!(r["item"]["updated_at"], "2025-10-01T13:00:10Z");
    // Generic: null keeps scalars but empties list fields.
    let r = update_ticket(&mut s, &id, json!({"tags": null, "status": null}));
    assert_eq!(r["item"]["tags"], json!([]), "{r}");
    assert_eq!(r["item"]["status"], "pending");
    // Absent tags stay.
    update_ticket(&mut s, &id, json!({"tags": ["b"]}));
    let r = update_ticket(&mut s, &id, json!({"priority": "high"}));
    assert_eq!(r["item"]["tags"], json!(["b"]), "{r}");
}

#[tb_test_support::data_test]
#[test]
fn status_violation_rows() {
    let mut s = session("sandbox_auto_insurance");
    let before = s.state.count("zendesk_ticket_status_violations").unwrap();
    let r = create_ticket(&mut s, json!({"subject": "x", "status": "open"}));
    assert!(r.get("item").is_some(), "{r}");
    assert_eq!(
        s.state.count("zendesk_ticket_status_violations").unwrap(),
        before
    );
    let r = create_ticket(&mut s, json!({"subject": "y"}));
    let rows = s.state.rows("zendesk_ticket_status_violations").unwrap();
    assert_eq!(rows.len(), before + 1);
    let v = rows.last().unwrap();
    assert_eq!(v["id"], json!(format!("VIOLATION-{}", before + 1)));
    assert_eq!(v["ticket_id"], r["item"]["id"]);
    assert_eq!(v["created_status"], "new");
    assert_eq!(v["created_at"], "2025-10-01T13:00:05Z");
    // Generic has no violation table rule.
    let mut g = session("sandbox_external_retail");
    let r = create_ticket(&mut g, json!({"subject": "y"}));
    assert!(r.get("item").is_some());
}

#[tb_test_support::data_test]
#[test]
fn neobank_and_booking_tags() {
    {
        let mut s = session("sandbox_neobank_support_v1");
        let r = create_ticket(
            &mut s,
            json!({"subject": "x", "status": "open", "tags": " VPN, access ,b"}),
        );
        assert_eq!(r["item"]["tags"], json!(["access", "b", "vpn"]), "{r}");
    }
    {
        let mut s = session("external_booking_v1");
        let r = create_ticket(
            &mut s,
            json!({"subject": "x", "tags": ["b", "VIP-customer", "A"]}),
        );
        assert_eq!(r["item"]["tags"], json!(["b", "VIP-customer", "A"]), "{r}");
        assert_eq!(r["item"]["refund_amount"], json!(0.0));
        let id = r["item"]["id"].clone();
        let row = s
            .state
            .rows("zendesk_tickets")
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap();
        assert_eq!(row["tags"], json!(["A", "b"]));
    }
}

#[tb_test_support::data_test]
#[test]
fn get_items_query_options() {
    let mut s = session("sandbox_external_retail");
    let all = call(&mut s, "zendesk_get_items", json!({"table": "users"}));
    let n = all["items"].as_array().unwrap().len();
    let r = call(
        &mut s,
        "zendesk_get_items",
        json!({"table": "users", "$top": 2, "$skip": 1, "$select": "id, name"}),
    );
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 2.min(n.saturating_sub(1)));
    assert_eq!(
        items[0].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["id", "name"]
    );
    // The plain names work too.
    let r = call(
        &mut s,
        "zendesk_get_items",
        json!({"table": "users", "top": 1}),
    );
    assert_eq!(r["items"].as_array().unwrap().len(), 1, "{r}");
    calls!(s;
        "zendesk_get_items" {"table": "users", "filter": 5} => error "Tool execution failed: Input validation failed: filter: Input should be a valid string";
        "zendesk_get_items" {"table": "users", "$filter": "email eq \"x\""} => error "Tool execution failed: Failed to parse OData filter: Failed to tokenize at: Token(type='ERROR', value='\"x\"', lineno=1, index=9)";
    );
    let r = call(
        &mut s,
        "zendesk_get_items",
        json!({"table": "users", "$orderby": "name desc"}),
    );
    let names: Vec<&str> = r["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u["name"].as_str())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(names, sorted);
}

#[tb_test_support::data_test]
#[test]
fn get_tables_lists_eighteen() {
    let mut s = session("sandbox_consulting");
    let r = call(&mut s, "zendesk_get_tables", json!({}));
    assert_eq!(r["value"].as_array().unwrap().len(), 18);
    assert_eq!(
        r["value"][3],
        json!({"Name": "group_memberships", "DisplayName": "Group Memberships"})
    );
}

#[test]
fn search_query_parsing() {
    let (p, t, n) = super::parse_query("reset \"Pass Word\" -\"old\" -vpn it's x");
    assert_eq!(p, ["pass word"]);
    assert_eq!(n, ["old", "vpn"]);
    assert_eq!(t, ["reset", "its", "x"]);
}
