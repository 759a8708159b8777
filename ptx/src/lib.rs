//! PTX front end.
