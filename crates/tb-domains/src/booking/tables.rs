//! The table names of the booking server.

/// `booking_api` bookings.
pub const BOOKINGS: &str = "booking_api_bookings";
/// `booking_api` group bookings.
pub const GROUPS: &str = "booking_api_group_bookings";
/// `booking_api` hotel inventory.
pub const INVENTORY: &str = "booking_api_hotel_inventory";
/// `hotel_partner_api` hotels.
pub const HOTELS: &str = "hotel_partner_api_hotels";
/// `corporate_api` corporate accounts.
pub const CORPORATE_ACCOUNTS: &str = "corporate_api_corporate_accounts";
/// `crm_api` customer profiles.
pub const PROFILES: &str = "crm_api_customer_profiles";
/// The zendesk tickets (escalations write here).
pub const TICKETS: &str = "zendesk_tickets";
/// `payment_api` transactions.
pub const TRANSACTIONS: &str = "payment_api_transactions";
/// `lookup` corporate accounts.
pub const LOOKUP_ACCOUNTS: &str = "lookup_corporate_accounts";
/// `lookup` group bookings.
pub const LOOKUP_GROUPS: &str = "lookup_group_bookings";
/// `lookup` bookings.
pub const LOOKUP_BOOKINGS: &str = "lookup_bookings";
/// `lookup` hotels.
pub const LOOKUP_HOTELS: &str = "lookup_hotels";
