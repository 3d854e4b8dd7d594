"""!
scenario: sandbox_external_retail
"""


def test_bs001_cancel_unshipped_order(x):
    """!
    query: Hi, I ordered a little Pebble speaker yesterday (ORD-5004) and I changed my mind. Can you cancel it?
    user_context: |
      You are Theo Lindqvist (customer id CUS-1002, theo.lindqvist@example.com).
      You want order ORD-5004 cancelled because you no longer want it. You accept a cancellation with a refund.
    init:
      sandbox_external_retail:
        data_patch: {}
        golden_test_case:
          tool_interactions:
            - tool: get_customer_profile
              parameters: {customer_id: CUS-1002}
            - tool: get_order
              parameters: {order_id: ORD-5004}
            - tool: cancel_order
              parameters: {order_id: ORD-5004, cancellation_reason: customer_request}
    """
    validate_database(x)


def test_bs002_change_address_before_shipping(x):
    """!
    query: I just moved. Can the TV I ordered (ORD-5001) go to my new place instead?
    user_context: |
      You are Maya Ortiz (CUS-1001, maya.ortiz@example.com). Your new address is
      1720 NE Broadway, Portland, OR 97232. Give it when asked.
    init:
      sandbox_external_retail:
        data_patch: {}
        golden_test_case:
          tool_interactions:
            - tool: get_order
              parameters: {order_id: ORD-5001}
            - tool: update_order_address
              parameters:
                order_id: ORD-5001
                new_address_line1: 1720 NE Broadway
                new_address_city: Portland
                new_address_state: OR
                new_address_zip: "97232"
    """
    validate_database(x)


def test_bs003_reschedule_installation(x):
    """!
    query: Something came up on Saturday. Can the technician mount my TV on October 8 at 4pm instead?
    user_context: |
      You are Maya Ortiz (CUS-1001). Your order is ORD-5001 and the installation job is JOB-7001.
      You want it moved to 2025-10-08 at 16:00 UTC, at your own request.
    init:
      sandbox_external_retail:
        data_patch: {}
        golden_test_case:
          tool_interactions:
            - tool: get_installation_job
              parameters: {order_id: ORD-5001}
            - tool: reschedule_installation
              parameters: {job_id: JOB-7001, new_scheduled_date: "2025-10-08T16:00:00Z", reschedule_reason: customer_request}
    """
    validate_database(x)


def test_bs004_points_for_delayed_shipment(x):
    """!
    query: My robot vacuum (ORD-5002) was supposed to arrive on the 26th and it is still stuck somewhere. This is really annoying.
    user_context: |
      You are Theo Lindqvist (CUS-1002). You want to know where the vacuum is and some compensation for the delay.
      You accept loyalty points as compensation.
    init:
      sandbox_external_retail:
        data_patch: {}
        golden_test_case:
          tool_interactions:
            - tool: get_shipment_tracking
              parameters: {order_id: ORD-5002}
            - tool: add_points_to_balance
              parameters: {customer_id: CUS-1002, points_to_add: 250, points_reason: service_recovery}
    """
    validate_database(x)


def test_bs005_return_defective_headphones(x):
    """!
    query: The left side of my Quiet40 headphones stopped working. I'd like to return them for a refund.
    user_context: |
      You are Priya Raman (CUS-1003, priya.raman@example.com). The headphones came with order ORD-5003,
      line item LIN-5003. They are defective (the left driver is dead). You want a full refund of $199.
    init:
      sandbox_external_retail:
        data_patch: {}
        golden_test_case:
          tool_interactions:
            - tool: get_order
              parameters: {order_id: ORD-5003}
            - tool: create_rma
              parameters:
                order_id: ORD-5003
                line_item_id: LIN-5003
                customer_id: CUS-1003
                return_reason: defective
                is_defective: true
                refund_amount: 199.0
                restocking_fee: 0.0
                return_shipping_cost: 0.0
                removal_fee: 0.0
    """
    validate_database(x)


def test_bs006_order_status_only(x):
    """!
    query: Quick question, has my headphones order ORD-5003 been delivered?
    user_context: |
      You are Priya Raman (CUS-1003). You only want to know the delivery status; you need nothing changed.
    init:
      sandbox_external_retail:
        data_patch: {}
        golden_test_case:
          tool_interactions:
            - tool: get_order
              parameters: {order_id: ORD-5003}
            - tool: get_shipment_tracking
              parameters: {order_id: ORD-5003}
    """
    validate_database(x)


def test_bs007_speed_up_and_close_ticket(x):
    """!
    query: I have a ticket open about my vacuum. It finally arrived, you can close it. Also please upgrade my speaker order ORD-5004 to next-day shipping.
    user_context: |
      You are Theo Lindqvist (CUS-1002). Your open ticket is number 1. You want it marked solved, and
      order ORD-5004 shipped next day.
    init:
      sandbox_external_retail:
        data_patch:
          external_retail_toolset_oms_models_carrier_tracking:
            - tracking_number: 1ZBS50020001
              shipment_id: SHP-5002
              carrier: UPS
              status: delivered
              current_location: Seattle, WA
              estimated_delivery: "2025-10-01T12:00:00Z"
              last_update: "2025-10-01T12:00:00Z"
        golden_test_case:
          tool_interactions:
            - tool: zendesk_update_item
              parameters: {table: tickets, id: "1", item: {status: solved}}
            - tool: update_shipping_speed
              parameters: {order_id: ORD-5004, new_shipping_speed: next_day}
    """
    validate_database(x)


def test_bs008_open_ticket_for_warranty(x):
    """!
    query: My headphones broke and I want to use the warranty, not return them. Can you open a case?
    user_context: |
      You are Priya Raman (CUS-1003, zendesk user 3). Order ORD-5003, SKU BS-HP-Q40, warranty contract WC-5003.
      One ear cup stopped working (a component failed). You want a warranty claim and a support ticket.
    init:
      sandbox_external_retail:
        data_patch: {}
        golden_test_case:
          tool_interactions:
            - tool: check_warranty_coverage
              parameters: {order_id: ORD-5003, sku: BS-HP-Q40}
            - tool: file_warranty_claim
              parameters: {contract_id: WC-5003, customer_id: CUS-1003, warranty_issue_type: component_failed}
            - tool: zendesk_create_item
              parameters:
                table: tickets
                item:
                  subject: Warranty claim for Quiet40 headphones
                  description: Component failure on order ORD-5003; warranty claim filed under WC-5003.
                  status: open
                  priority: normal
                  type: problem
                  requester_id: "3"
    """
    validate_database(x)
