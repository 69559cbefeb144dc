//! Schedules end to end in the service (issue 30).
