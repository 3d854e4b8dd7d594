//! The texts the model sees when it calls an airline or setup-check tool with arguments the
//! server's pydantic models refuse: byte for byte what the reference's servers answer, and
//! whether the reply is an MCP error.
//!
//! Every expected text below was produced once by the reference's servers themselves
//! (`thinkingbox_tools` of `thinkingbox-data` at `thinkingbox-bench-v1.0`, with the reference's
//! pins: pydantic 2.14.4, pydantic-core 2.50.5, mcp 1.30.0, fastmcp 3.4.11), each case called
//! over MCP through an in-memory client; they are facts, kept here as written. The airline and
//! `email_system` are MCP SDK servers (`Error executing tool <name>: ` and pydantic's text for
//! `<function>Arguments`), `online_banking` a fastmcp server (pydantic's text for
//! `call[<tool>]`). Cases that pass validation run on an empty state, as the reference's
//! uninitialised server did. `reference_servers_still_answer_these_texts` calls the reference's
//! servers again with every case (the differential check).

use serde_json::{Value, json};
use std::path::Path;
use tb_domains::own_servers::OwnServers;
use tb_sandbox::Clock;

/// `(server, tool, arguments, is an MCP error, text)`.
type Case = (&'static str, &'static str, &'static str, bool, &'static str);

/// Every case, each group once.
const ALL: &[&[Case]] = &[
    MISSING,
    STRING_TYPE,
    INT,
    FLOAT,
    LIST,
    DICT_AND_MODEL,
    LITERAL,
    RANGE,
    EXTRA,
    DATETIME,
    MULTIPLE,
    ACCEPTED,
    PRE_PARSED_AND_NESTED,
    FASTMCP_STRINGS_AS_GIVEN,
    FLOAT_INFINITY_IS_A_NUMBER,
];

/// The reference's servers, run under its pins, answer every case as written here.
/// Python: `$TB_SERVERS_PYTHON`, else `target/py-tbservers` (fastmcp 3.4.11, mcp 1.30.0,
/// pydantic 2.14.4; made by `scripts/ci-python-deps.sh`).
#[tb_test_support::reference_test]
#[tb_test_support::needs(python_servers)]
#[test]
fn reference_servers_still_answer_these_texts() {
    let py = tb_test_support::need(tb_test_support::Need::PythonServers);
    let cases: Vec<&Case> = ALL.iter().flat_map(|g| g.iter()).collect();
    let calls: Vec<Value> = cases
        .iter()
        .map(|(server, tool, args, ..)| {
            json!([server, tool, serde_json::from_str::<Value>(args).unwrap()])
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.json");
    std::fs::write(&file, serde_json::to_string(&calls).unwrap()).unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/call_reference_tools.py");
    let out = std::process::Command::new(&py)
        .arg(&script)
        .arg(&file)
        .env(
            "PYTHONPATH",
            tb_test_support::reference_data().join("servers/thinkingbox_tools"),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answers.len(), cases.len());
    let wrong: Vec<String> = cases
        .iter()
        .zip(&answers)
        .filter(|((.., is_error, text), a)| a["text"] != *text || a["is_error"] != *is_error)
        .map(|((server, tool, args, ..), a)| {
            format!("{server} {tool} {args}: the reference answers {a}")
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn config(server: &str) -> Value {
    match server {
        "airline_tau_bench" => json!({"flights": {}, "reservations": {}, "users": {}}),
        "online_banking" => json!({"accounts": [], "payees": []}),
        "email_system" => json!({"users": {"me@example.com": {}}}),
        other => panic!("no test config for {other}"),
    }
}

fn check(cases: &[Case]) {
    let servers = OwnServers::new(Path::new("/nonexistent"));
    let clock = Clock::parse("2026-11-30T12:00:00Z").unwrap();
    let mut wrong = Vec::new();
    for (server, tool, args, is_error, text) in cases {
        let mut s = servers
            .open(server, &config(server), "test.py:test_case", clock)
            .unwrap();
        let args: Value = serde_json::from_str(args).unwrap();
        let reply = s.call_tool(tool, &args);
        if reply.text != *text || reply.is_error != *is_error {
            wrong.push(format!(
                "{server} {tool} {args}\n  expected (error {is_error}):\n{text}\n  got (error {}):\n{}",
                reply.is_error, reply.text
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases differ:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

/// Required arguments left out (`missing` from the MCP SDK, `missing_argument` from fastmcp):
/// the input shown is the object they are missing from.
#[test]
fn missing() {
    check(MISSING);
}

const MISSING: &[Case] = &[
    (
        "airline_tau_bench",
        "get_user_details",
        r"{}",
        true,
        r"Error executing tool get_user_details: 1 validation error for get_user_detailsArguments
user_id
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing",
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r"{}",
        true,
        r"Error executing tool book_reservation: 8 validation errors for book_reservationArguments
user_id
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
origin
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
destination
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
flight_type
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
cabin
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
flights
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
passengers
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
payment_methods
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing",
    ),
    (
        "airline_tau_bench",
        "think",
        r"{}",
        true,
        r"Error executing tool think: 1 validation error for thinkArguments
thought
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing",
    ),
    (
        "online_banking",
        "get_balance",
        r"{}",
        true,
        r"1 validation error for call[get_balance]
account_number
  Missing required argument [type=missing_argument, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing_argument",
    ),
    (
        "online_banking",
        "deposit",
        r"{}",
        true,
        r"2 validation errors for call[deposit]
account_number
  Missing required argument [type=missing_argument, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing_argument
amount
  Missing required argument [type=missing_argument, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing_argument",
    ),
    (
        "email_system",
        "get_contact",
        r"{}",
        true,
        r"Error executing tool get_contact: 1 validation error for get_contactArguments
contact_id
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing",
    ),
];

/// `str` fields given other types (int, float, bool, None, list, dict), top level and nested.
#[test]
fn string_type() {
    check(STRING_TYPE);
}

const STRING_TYPE: &[Case] = &[
    (
        "airline_tau_bench",
        "get_user_details",
        r#"{"user_id": 7}"#,
        true,
        r"Error executing tool get_user_details: 1 validation error for get_user_detailsArguments
user_id
  Input should be a valid string [type=string_type, input_value=7, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "get_user_details",
        r#"{"user_id": null}"#,
        true,
        r"Error executing tool get_user_details: 1 validation error for get_user_detailsArguments
user_id
  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "get_user_details",
        r#"{"user_id": true}"#,
        true,
        r"Error executing tool get_user_details: 1 validation error for get_user_detailsArguments
user_id
  Input should be a valid string [type=string_type, input_value=True, input_type=bool]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "get_user_details",
        r#"{"user_id": ["a"]}"#,
        true,
        r"Error executing tool get_user_details: 1 validation error for get_user_detailsArguments
user_id
  Input should be a valid string [type=string_type, input_value=['a'], input_type=list]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "get_user_details",
        r#"{"user_id": {"a": 1}}"#,
        true,
        r"Error executing tool get_user_details: 1 validation error for get_user_detailsArguments
user_id
  Input should be a valid string [type=string_type, input_value={'a': 1}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "get_reservation_details",
        r#"{"reservation_id": 1.5}"#,
        true,
        r"Error executing tool get_reservation_details: 1 validation error for get_reservation_detailsArguments
reservation_id
  Input should be a valid string [type=string_type, input_value=1.5, input_type=float]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "update_reservation_flights",
        r#"{"reservation_id": "r", "cabin": "economy", "flights": [{"flight_number": 1, "date": null}], "payment_id": "p"}"#,
        true,
        r"Error executing tool update_reservation_flights: 2 validation errors for update_reservation_flightsArguments
flights.0.flight_number
  Input should be a valid string [type=string_type, input_value=1, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type
flights.0.date
  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "calculate",
        r#"{"expression": 1}"#,
        true,
        r"Error executing tool calculate: 1 validation error for calculateArguments
expression
  Input should be a valid string [type=string_type, input_value=1, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "online_banking",
        "get_balance",
        r#"{"account_number": 7}"#,
        true,
        r"1 validation error for call[get_balance]
account_number
  Input should be a valid string [type=string_type, input_value=7, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "email_system",
        "get_contact",
        r#"{"contact_id": 5}"#,
        true,
        r"Error executing tool get_contact: 1 validation error for get_contactArguments
contact_id
  Input should be a valid string [type=string_type, input_value=5, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "email_system",
        "list_emails",
        r#"{"folder": null}"#,
        true,
        r"Error executing tool list_emails: 1 validation error for list_messagesArguments
folder
  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "email_system",
        "list_emails",
        r#"{"folder": 3}"#,
        true,
        r"Error executing tool list_emails: 1 validation error for list_messagesArguments
folder
  Input should be a valid string [type=string_type, input_value=3, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "email_system",
        "add_contact",
        r#"{"name": "n", "email": "e@example.com", "phone": null, "manager": 5}"#,
        true,
        r"Error executing tool add_contact: 2 validation errors for add_contactArguments
phone
  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type
manager
  Input should be a valid string [type=string_type, input_value=5, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "search_direct_flight",
        r#"{"origin": "JFK", "destination": "LAX", "date": 20240515}"#,
        true,
        r"Error executing tool search_direct_flight: 1 validation error for search_direct_flightArguments
date
  Input should be a valid string [type=string_type, input_value=20240515, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
];

/// `int` fields: unparsable strings, fractions, non-numbers, None, numbers too large.
#[test]
fn int() {
    check(INT);
}

const INT: &[Case] = &[
    (
        "airline_tau_bench",
        "update_reservation_baggages",
        r#"{"reservation_id": "ZFA04Y", "total_baggages": "two", "nonfree_baggages": 1.5, "payment_id": "x"}"#,
        true,
        r"Error executing tool update_reservation_baggages: 2 validation errors for update_reservation_baggagesArguments
total_baggages
  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='two', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing
nonfree_baggages
  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=1.5, input_type=float]
    For further information visit https://errors.pydantic.dev/2.14/v/int_from_float",
    ),
    (
        "airline_tau_bench",
        "update_reservation_baggages",
        r#"{"reservation_id": "ZFA04Y", "total_baggages": [1], "nonfree_baggages": null, "payment_id": "x"}"#,
        true,
        r"Error executing tool update_reservation_baggages: 2 validation errors for update_reservation_baggagesArguments
total_baggages
  Input should be a valid integer [type=int_type, input_value=[1], input_type=list]
    For further information visit https://errors.pydantic.dev/2.14/v/int_type
nonfree_baggages
  Input should be a valid integer [type=int_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/int_type",
    ),
    (
        "airline_tau_bench",
        "update_reservation_baggages",
        r#"{"reservation_id": "ZFA04Y", "total_baggages": "1.0", "nonfree_baggages": "1.5", "payment_id": "x"}"#,
        true,
        r"Error executing tool update_reservation_baggages: 1 validation error for update_reservation_baggagesArguments
nonfree_baggages
  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='1.5', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing",
    ),
    (
        "airline_tau_bench",
        "update_reservation_baggages",
        r#"{"reservation_id": "ZFA04Y", "total_baggages": "this is a rather long text that pydantic will cut in the middle for sure", "nonfree_baggages": 1e+30, "payment_id": "x"}"#,
        true,
        r"Error executing tool update_reservation_baggages: 2 validation errors for update_reservation_baggagesArguments
total_baggages
  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='this is a rather long te... in the middle for sure', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing
nonfree_baggages
  Unable to parse input string as an integer, exceeded maximum size [type=int_parsing_size, input_value=1e+30, input_type=float]
    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing_size",
    ),
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": [], "total_baggages": -0.5}"#,
        true,
        r"Error executing tool check_price_quote: 1 validation error for check_price_quoteArguments
total_baggages
  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=-0.5, input_type=float]
    For further information visit https://errors.pydantic.dev/2.14/v/int_from_float",
    ),
    (
        "airline_tau_bench",
        "update_reservation_baggages",
        r#"{"reservation_id": "r", "total_baggages": "two", "nonfree_baggages": 0, "payment_id": "p"}"#,
        true,
        r"Error executing tool update_reservation_baggages: 1 validation error for update_reservation_baggagesArguments
total_baggages
  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='two', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing",
    ),
    (
        "airline_tau_bench",
        "update_reservation_baggages",
        r#"{"reservation_id": "r", "total_baggages": 2.5, "nonfree_baggages": 0, "payment_id": "p"}"#,
        true,
        r"Error executing tool update_reservation_baggages: 1 validation error for update_reservation_baggagesArguments
total_baggages
  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=2.5, input_type=float]
    For further information visit https://errors.pydantic.dev/2.14/v/int_from_float",
    ),
    (
        "airline_tau_bench",
        "update_reservation_baggages",
        r#"{"reservation_id": "r", "total_baggages": 1e+30, "nonfree_baggages": 0, "payment_id": "p"}"#,
        true,
        r"Error executing tool update_reservation_baggages: 1 validation error for update_reservation_baggagesArguments
total_baggages
  Unable to parse input string as an integer, exceeded maximum size [type=int_parsing_size, input_value=1e+30, input_type=float]
    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing_size",
    ),
];

/// `float` fields: unparsable strings, non-numbers, None.
#[test]
fn float() {
    check(FLOAT);
}

const FLOAT: &[Case] = &[
    (
        "airline_tau_bench",
        "send_certificate",
        r#"{"user_id": "u", "reason": "other", "reservation_id": "r", "amount": "ten"}"#,
        true,
        r"Error executing tool send_certificate: 1 validation error for send_certificateArguments
amount
  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='ten', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/float_parsing",
    ),
    (
        "airline_tau_bench",
        "send_certificate",
        r#"{"user_id": "u", "reason": "other", "reservation_id": "r", "amount": [1]}"#,
        true,
        r"Error executing tool send_certificate: 1 validation error for send_certificateArguments
amount
  Input should be a valid number [type=float_type, input_value=[1], input_type=list]
    For further information visit https://errors.pydantic.dev/2.14/v/float_type",
    ),
    (
        "airline_tau_bench",
        "send_certificate",
        r#"{"user_id": "u", "reason": "other", "reservation_id": "r", "amount": null}"#,
        true,
        r"Error executing tool send_certificate: 1 validation error for send_certificateArguments
amount
  Input should be a valid number [type=float_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/float_type",
    ),
    (
        "online_banking",
        "transfer",
        r#"{"from_account": "1", "to_account": "2", "amount": [1]}"#,
        true,
        r"1 validation error for call[transfer]
amount
  Input should be a valid number [type=float_type, input_value=[1], input_type=list]
    For further information visit https://errors.pydantic.dev/2.14/v/float_type",
    ),
    (
        "online_banking",
        "transfer",
        r#"{"from_account": "1", "to_account": "2", "amount": null}"#,
        true,
        r"1 validation error for call[transfer]
amount
  Input should be a valid number [type=float_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/float_type",
    ),
];

/// `list` fields given a non-list (a string that is not JSON, an object, None).
#[test]
fn list() {
    check(LIST);
}

const LIST: &[Case] = &[
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": "not json", "passengers": [], "payment_methods": []}"#,
        true,
        r"Error executing tool book_reservation: 1 validation error for book_reservationArguments
flights
  Input should be a valid list [type=list_type, input_value='not json', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/list_type",
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": {}, "payment_methods": []}"#,
        true,
        r"Error executing tool book_reservation: 1 validation error for book_reservationArguments
passengers
  Input should be a valid list [type=list_type, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/list_type",
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": [], "payment_methods": null}"#,
        true,
        r"Error executing tool book_reservation: 1 validation error for book_reservationArguments
payment_methods
  Input should be a valid list [type=list_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/list_type",
    ),
];

/// Objects: a model item that is not an object (`model_type`), a `dict` field given a
/// string (`dict_type`).
#[test]
fn dict_and_model() {
    check(DICT_AND_MODEL);
}

const DICT_AND_MODEL: &[Case] = &[
    (
        "email_system",
        "send_email",
        r#"{"to": "a@example.com", "cc": "", "subject": "s", "body": "b", "attachments": "x"}"#,
        true,
        r"Error executing tool send_email: 1 validation error for send_emailArguments
attachments
  Input should be a valid dictionary [type=dict_type, input_value='x', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/dict_type",
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": ["HAT001"], "passengers": [], "payment_methods": []}"#,
        true,
        r"Error executing tool book_reservation: 1 validation error for book_reservationArguments
flights.0
  Input should be a valid dictionary or instance of FlightDetail [type=model_type, input_value='HAT001', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/model_type",
    ),
];

/// `Literal[...]` fields given a value outside the choices.
#[test]
fn literal() {
    check(LITERAL);
}

const LITERAL: &[Case] = &[
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "x", "cabin": "economy", "flights": [], "passengers": []}"#,
        true,
        r"Error executing tool check_price_quote: 1 validation error for check_price_quoteArguments
flight_type
  Input should be 'one_way' or 'round_trip' [type=literal_error, input_value='x', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error",
    ),
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "first", "flights": [], "passengers": []}"#,
        true,
        r"Error executing tool check_price_quote: 1 validation error for check_price_quoteArguments
cabin
  Input should be 'basic_economy', 'economy' or 'business' [type=literal_error, input_value='first', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error",
    ),
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": [], "insurance": true}"#,
        true,
        r"Error executing tool check_price_quote: 1 validation error for check_price_quoteArguments
insurance
  Input should be 'yes' or 'no' [type=literal_error, input_value=True, input_type=bool]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error",
    ),
];

/// `ge=0` fields given a negative number (also as a string).
#[test]
fn range() {
    check(RANGE);
}

const RANGE: &[Case] = &[
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": [], "total_baggages": -1}"#,
        true,
        r"Error executing tool check_price_quote: 1 validation error for check_price_quoteArguments
total_baggages
  Input should be greater than or equal to 0 [type=greater_than_equal, input_value=-1, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/greater_than_equal",
    ),
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": [], "nonfree_baggages": "-3"}"#,
        true,
        r"Error executing tool check_price_quote: 1 validation error for check_price_quoteArguments
nonfree_baggages
  Input should be greater than or equal to 0 [type=greater_than_equal, input_value='-3', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/greater_than_equal",
    ),
];

/// Unknown keys: fastmcp refuses each (`unexpected_keyword_argument`, after the parameters'
/// errors); the MCP SDK ignores them (see `accepted`).
#[test]
fn extra() {
    check(EXTRA);
}

const EXTRA: &[Case] = &[
    (
        "online_banking",
        "get_balance",
        r#"{"account_number": "1", "extra": 2}"#,
        true,
        r"1 validation error for call[get_balance]
extra
  Unexpected keyword argument [type=unexpected_keyword_argument, input_value=2, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/unexpected_keyword_argument",
    ),
    (
        "online_banking",
        "get_accounts",
        r#"{"x": null}"#,
        true,
        r"1 validation error for call[get_accounts]
x
  Unexpected keyword argument [type=unexpected_keyword_argument, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/unexpected_keyword_argument",
    ),
];

/// `Optional[datetime]`: unparsable text, a non-date type.
#[test]
fn datetime() {
    check(DATETIME);
}

const DATETIME: &[Case] = &[
    (
        "online_banking",
        "pay_bill",
        r#"{"user_account": "1", "payee_account": "P", "amount": 1, "date": "tomorrow"}"#,
        true,
        r"1 validation error for call[pay_bill]
date
  Input should be a valid datetime or date, input is too short [type=datetime_from_date_parsing, input_value='tomorrow', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/datetime_from_date_parsing",
    ),
    (
        "online_banking",
        "pay_bill",
        r#"{"user_account": "1", "payee_account": "P", "amount": 1, "date": "2024-13-01"}"#,
        true,
        r"1 validation error for call[pay_bill]
date
  Input should be a valid datetime or date, month value is outside expected range of 1-12 [type=datetime_from_date_parsing, input_value='2024-13-01', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/datetime_from_date_parsing",
    ),
    (
        "online_banking",
        "pay_bill",
        r#"{"user_account": "1", "payee_account": "P", "amount": 1, "date": [1]}"#,
        true,
        r"1 validation error for call[pay_bill]
date
  Input should be a valid datetime [type=datetime_type, input_value=[1], input_type=list]
    For further information visit https://errors.pydantic.dev/2.14/v/datetime_type",
    ),
];

/// Several errors at once, of several types, in the order pydantic reports them.
#[test]
fn multiple() {
    check(MULTIPLE);
}

const MULTIPLE: &[Case] = &[
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": "not json", "passengers": {}, "payment_methods": [5]}"#,
        true,
        r"Error executing tool book_reservation: 3 validation errors for book_reservationArguments
flights
  Input should be a valid list [type=list_type, input_value='not json', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/list_type
passengers
  Input should be a valid list [type=list_type, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/list_type
payment_methods.0
  Input should be a valid dictionary or instance of PaymentMethod [type=model_type, input_value=5, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/model_type",
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [{"flight_number": "HAT001"}], "passengers": "[{\"first_name\": \"A\", \"last_name\": 3, \"dob\": \"1990-01-01\"}]", "payment_methods": [{"payment_id": "p", "amount": "x"}]}"#,
        true,
        r"Error executing tool book_reservation: 3 validation errors for book_reservationArguments
flights.0.date
  Field required [type=missing, input_value={'flight_number': 'HAT001'}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
passengers.0.last_name
  Input should be a valid string [type=string_type, input_value=3, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type
payment_methods.0.amount
  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='x', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/float_parsing",
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": [], "payment_methods": [], "total_baggages": "a", "insurance": 5}"#,
        true,
        r"Error executing tool book_reservation: 2 validation errors for book_reservationArguments
total_baggages
  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='a', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing
insurance
  Input should be a valid string [type=string_type, input_value=5, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "x", "cabin": "first", "flights": [], "passengers": [], "total_baggages": -1, "nonfree_baggages": -2, "insurance": "maybe", "reservation_id": 5}"#,
        true,
        r"Error executing tool check_price_quote: 6 validation errors for check_price_quoteArguments
flight_type
  Input should be 'one_way' or 'round_trip' [type=literal_error, input_value='x', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error
cabin
  Input should be 'basic_economy', 'economy' or 'business' [type=literal_error, input_value='first', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error
total_baggages
  Input should be greater than or equal to 0 [type=greater_than_equal, input_value=-1, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/greater_than_equal
nonfree_baggages
  Input should be greater than or equal to 0 [type=greater_than_equal, input_value=-2, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/greater_than_equal
insurance
  Input should be 'yes' or 'no' [type=literal_error, input_value='maybe', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error
reservation_id
  Input should be a valid string [type=string_type, input_value=5, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": 1, "cabin": null, "flights": [], "passengers": [], "total_baggages": "-1"}"#,
        true,
        r"Error executing tool check_price_quote: 3 validation errors for check_price_quoteArguments
flight_type
  Input should be 'one_way' or 'round_trip' [type=literal_error, input_value=1, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error
cabin
  Input should be 'basic_economy', 'economy' or 'business' [type=literal_error, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error
total_baggages
  Input should be greater than or equal to 0 [type=greater_than_equal, input_value='-1', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/greater_than_equal",
    ),
    (
        "online_banking",
        "transfer",
        r#"{"from_account": "1", "to_account": 2, "amount": "ten"}"#,
        true,
        r"2 validation errors for call[transfer]
to_account
  Input should be a valid string [type=string_type, input_value=2, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type
amount
  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='ten', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/float_parsing",
    ),
    (
        "email_system",
        "send_email",
        r#"{"to": ["a@example.com"], "cc": null, "subject": 1}"#,
        true,
        r"Error executing tool send_email: 4 validation errors for send_emailArguments
to
  Input should be a valid string [type=string_type, input_value=['a@example.com'], input_type=list]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type
cc
  Input should be a valid string [type=string_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type
subject
  Input should be a valid string [type=string_type, input_value=1, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type
body
  Field required [type=missing, input_value={'to': ['a@example.com'],...cc': None, 'subject': 1}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing",
    ),
    (
        "online_banking",
        "transfer",
        r#"{"zzz": 1, "from_account": 5, "aaa": "x"}"#,
        true,
        r"5 validation errors for call[transfer]
from_account
  Input should be a valid string [type=string_type, input_value=5, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type
to_account
  Missing required argument [type=missing_argument, input_value={'zzz': 1, 'from_account': 5, 'aaa': 'x'}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing_argument
amount
  Missing required argument [type=missing_argument, input_value={'zzz': 1, 'from_account': 5, 'aaa': 'x'}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing_argument
zzz
  Unexpected keyword argument [type=unexpected_keyword_argument, input_value=1, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/unexpected_keyword_argument
aaa
  Unexpected keyword argument [type=unexpected_keyword_argument, input_value='x', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/unexpected_keyword_argument",
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": "[{\"flight_number\": \"HAT001\", \"date\": 5}]", "passengers": "[1, 2]", "payment_methods": "{\"payment_id\": \"p\"}"}"#,
        true,
        r"Error executing tool book_reservation: 4 validation errors for book_reservationArguments
flights.0.date
  Input should be a valid string [type=string_type, input_value=5, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type
passengers.0
  Input should be a valid dictionary or instance of PassengerInfo [type=model_type, input_value=1, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/model_type
passengers.1
  Input should be a valid dictionary or instance of PassengerInfo [type=model_type, input_value=2, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/model_type
payment_methods
  Input should be a valid list [type=list_type, input_value={'payment_id': 'p'}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/list_type",
    ),
];

/// Inputs pydantic accepts (lax coercion, ignored extras): the tool runs (on the empty test state).
#[test]
fn accepted() {
    check(ACCEPTED);
}

const ACCEPTED: &[Case] = &[
    (
        "airline_tau_bench",
        "get_user_details",
        r#"{"user_id": "nobody", "extra": 1}"#,
        false,
        r"Error!
User nobody not found",
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "mia_li_3668", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": [{"first_name": "A", "last_name": "B", "dob": "01/01/1990"}], "payment_methods": []}"#,
        false,
        r#"Error!
[{'type': 'string_pattern_mismatch', 'loc': ('dob',), 'msg': "String should match pattern '^\\d{4}-\\d{2}-\\d{2}$'", 'input': '01/01/1990', 'ctx': {'pattern': '^\\d{4}-\\d{2}-\\d{2}$'}, 'url': 'https://errors.pydantic.dev/2.14/v/string_pattern_mismatch'}]"#,
    ),
    (
        "online_banking",
        "pay_bill",
        r#"{"user_account": "1", "payee_account": "P", "amount": 1, "date": 5}"#,
        false,
        r"Error!
Account not found: 1",
    ),
    (
        "airline_tau_bench",
        "list_all_airports",
        r#"{"x": 1}"#,
        false,
        r#"{"status": "ok", "airports": []}"#,
    ),
];

/// The MCP SDK's pre-parsing: a string given for an argument that is not a `str` (a list,
/// an int, a Literal, an optional str, a dict) is parsed as JSON, and taken when it gives a
/// list, an object or null (a number, bool or string keeps the string); nested models ignore
/// unknown keys; several missing fields of nested models.
#[test]
fn pre_parsed_and_nested() {
    check(PRE_PARSED_AND_NESTED);
}

const PRE_PARSED_AND_NESTED: &[Case] = &[
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": "5", "payment_methods": []}"#,
        true,
        r"Error executing tool book_reservation: 1 validation error for book_reservationArguments
passengers
  Input should be a valid list [type=list_type, input_value='5', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/list_type",
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": "null", "passengers": [], "payment_methods": []}"#,
        true,
        r"Error executing tool book_reservation: 1 validation error for book_reservationArguments
flights
  Input should be a valid list [type=list_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/list_type",
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": "\"[]\"", "passengers": [], "payment_methods": []}"#,
        true,
        r#"Error executing tool book_reservation: 1 validation error for book_reservationArguments
flights
  Input should be a valid list [type=list_type, input_value='"[]"', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/list_type"#,
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": "[{\"flight_number\": \"HAT001\", \"date\": \"2024-05-20\", \"x\": 1}, 7]", "passengers": [], "payment_methods": [], "total_baggages": " 3 ", "nonfree_baggages": "1_0"}"#,
        true,
        r"Error executing tool book_reservation: 1 validation error for book_reservationArguments
flights.1
  Input should be a valid dictionary or instance of FlightDetail [type=model_type, input_value=7, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/model_type",
    ),
    (
        "airline_tau_bench",
        "book_reservation",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": [], "payment_methods": "[{\"payment_id\": \"p\", \"amount\": \"12.5\"}, {\"payment_id\": 1, \"amount\": true}]"}"#,
        true,
        r"Error executing tool book_reservation: 1 validation error for book_reservationArguments
payment_methods.1.payment_id
  Input should be a valid string [type=string_type, input_value=1, input_type=int]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "calculate",
        r#"{"expression": "1+1", "extra": [1]}"#,
        false,
        r#"{"status": "ok", "result": 2.0}"#,
    ),
    (
        "airline_tau_bench",
        "update_reservation_passengers",
        r#"{"reservation_id": "r", "passengers": [{"first_name": "A", "last_name": "B"}, {}]}"#,
        true,
        r"Error executing tool update_reservation_passengers: 4 validation errors for update_reservation_passengersArguments
passengers.0.dob
  Field required [type=missing, input_value={'first_name': 'A', 'last_name': 'B'}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
passengers.1.first_name
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
passengers.1.last_name
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing
passengers.1.dob
  Field required [type=missing, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/missing",
    ),
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": [], "total_baggages": "null"}"#,
        true,
        r"Error executing tool check_price_quote: 1 validation error for check_price_quoteArguments
total_baggages
  Input should be a valid integer [type=int_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/int_type",
    ),
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": [], "reservation_id": "null", "insurance": "null"}"#,
        true,
        r"Error executing tool check_price_quote: 1 validation error for check_price_quoteArguments
insurance
  Input should be 'yes' or 'no' [type=literal_error, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error",
    ),
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "{\"a\": 1}", "cabin": "economy", "flights": [], "passengers": [], "reservation_id": "[1]"}"#,
        true,
        r"Error executing tool check_price_quote: 2 validation errors for check_price_quoteArguments
flight_type
  Input should be 'one_way' or 'round_trip' [type=literal_error, input_value={'a': 1}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/literal_error
reservation_id
  Input should be a valid string [type=string_type, input_value=[1], input_type=list]
    For further information visit https://errors.pydantic.dev/2.14/v/string_type",
    ),
    (
        "airline_tau_bench",
        "check_price_quote",
        r#"{"user_id": "u", "origin": "JFK", "destination": "LAX", "flight_type": "one_way", "cabin": "economy", "flights": [], "passengers": [], "total_baggages": "true", "nonfree_baggages": " [ ] "}"#,
        true,
        r"Error executing tool check_price_quote: 2 validation errors for check_price_quoteArguments
total_baggages
  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='true', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing
nonfree_baggages
  Input should be a valid integer [type=int_type, input_value=[], input_type=list]
    For further information visit https://errors.pydantic.dev/2.14/v/int_type",
    ),
    (
        "airline_tau_bench",
        "send_certificate",
        r#"{"user_id": "u", "reason": "r", "reservation_id": "r", "amount": "{}"}"#,
        true,
        r"Error executing tool send_certificate: 1 validation error for send_certificateArguments
amount
  Input should be a valid number [type=float_type, input_value={}, input_type=dict]
    For further information visit https://errors.pydantic.dev/2.14/v/float_type",
    ),
    (
        "airline_tau_bench",
        "get_user_details",
        r#"{"user_id": "null"}"#,
        false,
        r"Error!
User null not found",
    ),
    (
        "email_system",
        "send_email",
        r#"{"to": "a@example.com", "cc": "", "subject": "s", "body": "b", "attachments": "null"}"#,
        true,
        r"Error executing tool send_email: 1 validation error for send_emailArguments
attachments
  Input should be a valid dictionary [type=dict_type, input_value=None, input_type=NoneType]
    For further information visit https://errors.pydantic.dev/2.14/v/dict_type",
    ),
    (
        "email_system",
        "send_email",
        r#"{"to": "a@example.com", "cc": "", "subject": "s", "body": "b", "attachments": "[1]"}"#,
        true,
        r"Error executing tool send_email: 1 validation error for send_emailArguments
attachments
  Input should be a valid dictionary [type=dict_type, input_value=[1], input_type=list]
    For further information visit https://errors.pydantic.dev/2.14/v/dict_type",
    ),
    (
        "email_system",
        "send_email",
        r#"{"to": "a@example.com", "cc": "", "subject": "s", "body": "b", "attachments": "{\"f\": 1}"}"#,
        false,
        r"Error!",
    ),
];

/// fastmcp does not pre-parse: a string stays a string (`"null"` is unparsable text for a
/// float or a datetime); lax numbers and datetimes as pydantic reads them.
#[test]
fn fastmcp_strings_as_given() {
    check(FASTMCP_STRINGS_AS_GIVEN);
}

const FASTMCP_STRINGS_AS_GIVEN: &[Case] = &[
    (
        "online_banking",
        "transfer",
        r#"{"from_account": "1", "to_account": "2", "amount": "null"}"#,
        true,
        r"1 validation error for call[transfer]
amount
  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='null', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/float_parsing",
    ),
    (
        "online_banking",
        "transfer",
        r#"{"from_account": "1", "to_account": "2", "amount": "[1]"}"#,
        true,
        r"1 validation error for call[transfer]
amount
  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='[1]', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/float_parsing",
    ),
    (
        "online_banking",
        "pay_bill",
        r#"{"user_account": "1", "payee_account": "P", "amount": 1, "date": "null"}"#,
        true,
        r"1 validation error for call[pay_bill]
date
  Input should be a valid datetime or date, input is too short [type=datetime_from_date_parsing, input_value='null', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/datetime_from_date_parsing",
    ),
    (
        "online_banking",
        "get_balance",
        r#"{"account_number": "[1]"}"#,
        false,
        r"Error!
Account not found: [1]",
    ),
    (
        "online_banking",
        "transfer",
        r#"{"from_account": "1", "to_account": "2", "amount": " 1e3 "}"#,
        false,
        r"Error!
Invalid account number(s)",
    ),
    (
        "online_banking",
        "transfer",
        r#"{"from_account": "1", "to_account": "2", "amount": true}"#,
        false,
        r"Error!
Invalid account number(s)",
    ),
    (
        "online_banking",
        "pay_bill",
        r#"{"user_account": "1", "payee_account": "P", "amount": 1, "date": "2024-06-01T25:00:00"}"#,
        true,
        r"1 validation error for call[pay_bill]
date
  Input should be a valid datetime or date, unexpected extra characters at the end of the input [type=datetime_from_date_parsing, input_value='2024-06-01T25:00:00', input_type=str]
    For further information visit https://errors.pydantic.dev/2.14/v/datetime_from_date_parsing",
    ),
    (
        "online_banking",
        "pay_bill",
        r#"{"user_account": "1", "payee_account": "P", "amount": 1, "date": true}"#,
        true,
        r"1 validation error for call[pay_bill]
date
  Input should be a valid datetime [type=datetime_type, input_value=True, input_type=bool]
    For further information visit https://errors.pydantic.dev/2.14/v/datetime_type",
    ),
];

/// pydantic's `float` takes `"inf"` (and `"nan"`) as numbers; our validation refuses non-finite
/// numbers (`finite_number`), as a JSON value cannot hold them.
#[test]
#[ignore = "known difference: a float argument \"inf\" is refused by tb-sandbox's coercion, which keeps JSON values finite"]
fn float_infinity_is_a_number() {
    check(FLOAT_INFINITY_IS_A_NUMBER);
}

const FLOAT_INFINITY_IS_A_NUMBER: &[Case] = &[(
    "airline_tau_bench",
    "send_certificate",
    r#"{"user_id": "u", "reason": "other", "reservation_id": "r", "amount": "inf"}"#,
    false,
    r"Error!
User u not found",
)];
